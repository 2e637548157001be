import { suggestField } from '../suggest-field.js';
import type { AnswerIssue, Compiled, IssuePath, RequestContext } from './context.js';
import { numberOf, textOf } from './values.js';
import { parseSource, type MatcherSource } from './matcher-sources.js';
import { compileLinear, type LinearCompile } from '../regex/linear-regex.js';

/** A compiled `when` map. */
export interface CompiledWhen {
  /** Whether every entry holds for the request. */
  readonly test: (ctx: RequestContext) => boolean;
  /** The keys of the entries that do not hold (for "closest item" hints); empty when `test` holds. */
  readonly failing: (ctx: RequestContext) => string[];
}

/** Options of {@link compileWhen}. */
export interface WhenOptions {
  /** Declared scenarios; when given, `state.<name>` must name one. */
  readonly scenarios?: readonly string[];
  /** Field path of the `when` map, put in front of every issue's path. Default `['when']`. */
  readonly path?: IssuePath;
}

/**
 * `matches` sees at most this many characters of its source: a regex runs on bounded input, and
 * the linear engine's work is this times the pattern's program (linear-regex.ts).
 */
export const MATCH_INPUT_LIMIT = 2048;

type Test = (value: unknown) => boolean;
type Scalar = string | number | boolean | null;
const OPERATORS = ['in', 'matches', 'exists', 'gt', 'gte', 'lt', 'lte', 'contains', 'includes', 'not'];
const REGEX_LITERAL = /^\/(.*)\/([imsuv]*)$/s;

/**
 * Compiles a `when` map (source → matcher) into a test over the request. Every problem —
 * an unknown source or matcher, a bad regex, a value of the wrong type — is returned with its
 * field path, e.g. `['when', 'params.id', 'matches']`; nothing is thrown.
 */
export function compileWhen(when: unknown, options: WhenOptions = {}): Compiled<CompiledWhen> {
  const base = options.path ?? ['when'];
  const issues: AnswerIssue[] = [];
  if (!isMap(when))
    return {
      ok: false,
      issues: [{ path: base, message: 'must be a mapping of source to matcher, e.g. { params.id: "7" }' }],
    };
  const entries: Array<readonly [string, MatcherSource, Test]> = [];
  for (const [key, spec] of Object.entries(when)) {
    const parsed = parseSource(key, options.scenarios);
    if (!parsed.ok) {
      issues.push({ path: [...base, key], message: parsed.message });
      continue;
    }
    const test = compileMatcher(spec, parsed.source.kind, [...base, key], issues);
    if (test !== undefined) entries.push([key, parsed.source, test]);
  }
  if (issues.length > 0) return { ok: false, issues };
  const holds = ([, source, test]: (typeof entries)[number], ctx: RequestContext): boolean => test(source.read(ctx));
  return {
    ok: true,
    value: {
      test: (ctx) => {
        // A plain loop: this runs for every request to the endpoint, until an entry fails.
        for (const entry of entries) if (!holds(entry, ctx)) return false;
        return true;
      },
      failing: (ctx) => entries.filter((entry) => !holds(entry, ctx)).map(([key]) => key),
    },
  };
}

function isMap(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}

function isScalar(value: unknown): value is Scalar {
  return value === null || ['string', 'number', 'boolean'].includes(typeof value);
}

/** A test that holds for a repeated query parameter when it holds for any of its values. */
function anyValue(kind: MatcherSource['kind'], test: Test): Test {
  return kind === 'text' ? (v) => (Array.isArray(v) ? v.some(test) : test(v)) : test;
}

function compileMatcher(
  spec: unknown,
  kind: MatcherSource['kind'],
  path: IssuePath,
  issues: AnswerIssue[],
): Test | undefined {
  if (Array.isArray(spec)) {
    issues.push({ path, message: 'is a list; to accept any of several values write { in: [...] }' });
    return undefined;
  }
  if (!isMap(spec)) return scalarTest(spec, kind, path, issues);
  const keys = Object.keys(spec);
  if (keys.length === 0) {
    issues.push({ path, message: `is an empty matcher; use a value or one of ${OPERATORS.join(', ')}` });
    return undefined;
  }
  const tests: Test[] = [];
  for (const key of keys) {
    const test = operatorTest(key, spec[key], kind, [...path, key], issues);
    if (test !== undefined) tests.push(test);
  }
  if (tests.length !== keys.length) return undefined;
  const [only] = tests;
  return tests.length === 1 && only !== undefined ? only : (v) => tests.every((test) => test(v));
}

function scalarTest(
  spec: unknown,
  kind: MatcherSource['kind'],
  path: IssuePath,
  issues: AnswerIssue[],
): Test | undefined {
  if (!isScalar(spec)) {
    issues.push({ path, message: 'must be a value or a matcher mapping' });
    return undefined;
  }
  if (kind === 'json') return (v) => v === spec;
  if (spec === null) {
    issues.push({
      path,
      message: 'cannot be null for a text source; to match a missing value write { exists: false }',
    });
    return undefined;
  }
  const expected = String(spec);
  return anyValue(kind, (v) => v !== undefined && textOf(v) === expected);
}

function operatorTest(
  key: string,
  arg: unknown,
  kind: MatcherSource['kind'],
  path: IssuePath,
  issues: AnswerIssue[],
): Test | undefined {
  const fail = (message: string): undefined => {
    issues.push({ path, message });
    return undefined;
  };
  switch (key) {
    case 'in': {
      if (!Array.isArray(arg) || arg.length === 0) return fail('must be a non-empty list of values');
      const tests = arg.map((item, i) => scalarTest(item, kind, [...path, i], issues));
      if (tests.some((test) => test === undefined)) return undefined;
      return (v) => tests.some((test) => (test as Test)(v));
    }
    case 'matches':
      return regexTest(arg, kind, fail);
    case 'exists':
      if (typeof arg !== 'boolean') return fail('must be true or false');
      return (v) => (v !== undefined) === arg;
    case 'gt':
    case 'gte':
    case 'lt':
    case 'lte': {
      if (typeof arg !== 'number' || !Number.isFinite(arg)) return fail('must be a number');
      const compare = COMPARE[key];
      return anyValue(kind, (v) => {
        const n = numberOf(v);
        return n !== undefined && compare(n, arg);
      });
    }
    case 'contains': {
      if (typeof arg !== 'string') return fail('must be text');
      // Text contains the text; a JSON list contains it when one of its items is that text.
      return anyValue(kind, (v) =>
        Array.isArray(v) ? v.some((item) => textOf(item) === arg) : typeof v === 'string' && v.includes(arg),
      );
    }
    case 'includes':
      return anyValue(kind, (v) => includesPartial(v, arg));
    case 'not': {
      const inner = compileMatcher(arg, kind, path, issues);
      return inner === undefined ? undefined : (v) => !inner(v);
    }
  }
  const hint = suggestField(key, OPERATORS);
  return fail(
    `is not a known matcher; ${hint === undefined ? `matchers are ${OPERATORS.join(', ')}` : `did you mean \`${hint}\`?`}`,
  );
}

const COMPARE: Record<'gt' | 'gte' | 'lt' | 'lte', (a: number, b: number) => boolean> = {
  gt: (a, b) => a > b,
  gte: (a, b) => a >= b,
  lt: (a, b) => a < b,
  lte: (a, b) => a <= b,
};

/**
 * The linear engine's compiled patterns by pattern and flags. An imported config repeats a few
 * patterns thousands of times (GitHub's: 2,278 `Prefer: code=…` matchers, 68 patterns): each is
 * compiled once per process and shared (a compiled pattern keeps no state between tests). Bounded:
 * past the bound, patterns are compiled afresh.
 */
const linearPatterns = new Map<string, LinearCompile>();
const MAX_PATTERNS = 4096;

function linearOf(regex: RegExp): LinearCompile {
  const key = `${regex.flags}/${regex.source}`;
  const known = linearPatterns.get(key);
  if (known !== undefined) return known;
  const compiled = compileLinear(regex.source, regex.flags);
  if (linearPatterns.size < MAX_PATTERNS) linearPatterns.set(key, compiled);
  return compiled;
}

/**
 * `matches`: a pattern (`^\d+$`) or a regex literal with flags (`/^ada/i`; flags i, m, s, u, v).
 * It tests the text (JSON values as their JSON text), cut to {@link MATCH_INPUT_LIMIT} characters,
 * on the linear-time engine (linear-regex.ts): no input can make it backtrack. A pattern that
 * engine cannot run (a backreference, a lookaround) or that is too large is refused.
 */
function regexTest(arg: unknown, kind: MatcherSource['kind'], fail: (message: string) => undefined): Test | undefined {
  if (typeof arg !== 'string') return fail('must be a regular expression as text');
  const literal = REGEX_LITERAL.exec(arg);
  let regex: RegExp;
  try {
    regex = literal === null ? new RegExp(arg) : new RegExp(literal[1] as string, literal[2]);
  } catch (error) {
    return fail(`is not a valid regular expression: ${(error as Error).message}`);
  }
  const linear = linearOf(regex);
  if (!linear.ok) return fail(linear.reason);
  const { test } = linear.regex;
  return anyValue(kind, (v) => v !== undefined && test(textOf(v).slice(0, MATCH_INPUT_LIMIT)));
}

/**
 * Deep partial match: an object pattern holds when each of its keys holds in the value; a list
 * pattern when each of its items matches some item of the value (order free); anything else by
 * strict equality (so `5` does not match `"5"`).
 */
export function includesPartial(value: unknown, pattern: unknown): boolean {
  if (Array.isArray(pattern))
    return Array.isArray(value) && pattern.every((p) => value.some((v) => includesPartial(v, p)));
  if (isMap(pattern)) {
    if (!isMap(value)) return false;
    return Object.keys(pattern).every((key) => Object.hasOwn(value, key) && includesPartial(value[key], pattern[key]));
  }
  return value === pattern;
}
