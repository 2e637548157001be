import { createRequire } from 'node:module';

/**
 * Patterns from a config (`matches`) or an OpenAPI description (`pattern`) run on RE2JS, a
 * pure-JavaScript port of RE2: it matches in time linear in the input, so no input makes it
 * backtrack. Its cost per character grows with the size of the compiled pattern (its program), so
 * both are bounded: a pattern of more than {@link MAX_PROGRAM} instructions is refused, and a text
 * is tested on at most {@link WORK_BUDGET} / program characters. Together they keep one test under
 * about {@link WORK_BUDGET} instruction steps, whatever the pattern and the input.
 *
 * What RE2 cannot do in linear time — backreferences (`\1`), lookahead and lookbehind — is refused
 * with the engine's reason. RE2 folds case by Unicode's simple folding (`k` matches `K` and the
 * Kelvin sign) and reads `\s` as ASCII space; JavaScript's syntax (`(?<name>…)`, `\u{…}`, `[^]`) is
 * translated first.
 */

/** The most instructions a compiled pattern may have (a `[a-z0-9]{1,63}` is about 66). */
export const MAX_PROGRAM = 256;

/** Instruction steps one test may take at most: program size × characters tested. */
export const WORK_BUDGET = 2048 * MAX_PROGRAM;

/** A compiled pattern: `test` searches the text (as RegExp.test does). */
export interface LinearRegex {
  readonly source: string;
  /** Instructions of its program (the cost of one character). */
  readonly program: number;
  /** The most characters of a text that `test` reads: {@link WORK_BUDGET} / program. */
  readonly inputLimit: number;
  test(text: string): boolean;
}

/** A pattern compiled, or why it cannot be. */
export type LinearCompile =
  { readonly ok: true; readonly regex: LinearRegex } | { readonly ok: false; readonly reason: string };

interface Re2Program {
  inst?: unknown[];
}
interface Re2Pattern {
  test(input: string): boolean;
  re2(): { prog?: Re2Program };
}
interface Re2Module {
  RE2JS: {
    compile(pattern: string, flags?: number): Re2Pattern;
    translateRegExp(pattern: string): string;
    CASE_INSENSITIVE: number;
    DOTALL: number;
    MULTILINE: number;
  };
}

let re2: Re2Module | undefined;
/** RE2JS, loaded on the first pattern (a config without one never pays for it). */
function engine(): Re2Module['RE2JS'] {
  re2 ??= createRequire(import.meta.url)('re2js') as Re2Module;
  return re2.RE2JS;
}

/** Why RE2 refused a pattern, in words a config author can act on. */
function refusal(message: string): string {
  const reason = message.replace(/^error parsing regexp: /, '');
  if (/invalid escape sequence: `\\[1-9k]/.test(reason))
    return `uses a backreference, which cannot be matched in linear time (${reason})`;
  if (/`\(\?[=!]|`\(\?<[=!]|invalid named capture: `\(\?<[=!]/.test(reason))
    return `uses lookahead or lookbehind, which cannot be matched in linear time (${reason})`;
  return `cannot be matched in linear time: ${reason}`;
}

/**
 * Compiles `source` with JavaScript flags (`i`, `m`, `s`; `u`, `v`, `g`, `y`, `d` change nothing
 * here). The pattern should already be a valid JavaScript RegExp: this only says whether it can be
 * run in linear time.
 */
export function compileLinear(source: string, flags = ''): LinearCompile {
  const RE2JS = engine();
  let pattern: Re2Pattern;
  try {
    let bits = 0;
    if (flags.includes('i')) bits |= RE2JS.CASE_INSENSITIVE;
    if (flags.includes('m')) bits |= RE2JS.MULTILINE;
    if (flags.includes('s')) bits |= RE2JS.DOTALL;
    pattern = RE2JS.compile(RE2JS.translateRegExp(source), bits);
  } catch (err) {
    return { ok: false, reason: refusal((err as Error).message) };
  }
  // The program's size is RE2's own measure of a pattern; an engine that no longer shows it is
  // judged by the pattern's length, which bounds it from below.
  const program = pattern.re2().prog?.inst?.length ?? source.length * 4;
  if (program > MAX_PROGRAM) {
    return {
      ok: false,
      reason: `is too large to be matched quickly (${program} instructions once compiled, at most ${MAX_PROGRAM}): use fewer or smaller counted repeats such as {1,63}`,
    };
  }
  const inputLimit = Math.floor(WORK_BUDGET / Math.max(1, program));
  return {
    ok: true,
    regex: {
      source,
      program,
      inputLimit,
      test: (text) => pattern.test(text.length > inputLimit ? text.slice(0, inputLimit) : text),
    },
  };
}

/** A pattern as ajv holds it: `toString` is its key among the patterns ajv keeps (RegExp's own form). */
interface AjvPattern {
  test(text: string): boolean;
  toString(): string;
}

/**
 * ajv's `code.regExp` engine for OpenAPI `pattern`s (and `patternProperties`): the linear engine.
 * A pattern that is not a JavaScript regex throws (ajv reports the schema as not compilable); one
 * the engine cannot run (a backreference, a lookaround, too large) is not checked — a vendor's
 * description never stops the mock — and a text longer than the pattern's input limit does not
 * match it (it could not be checked in bounded time).
 */
export const ajvRegExp: ((pattern: string, flags: string) => AjvPattern) & { code: string } = Object.assign(
  (pattern: string, flags: string): AjvPattern => {
    const key = String(new RegExp(pattern, flags)); // throws for what is not a regex at all
    const compiled = compileLinear(pattern, flags);
    if (!compiled.ok) return { test: () => true, toString: () => key };
    const { regex } = compiled;
    return { test: (text: string) => text.length <= regex.inputLimit && regex.test(text), toString: () => key };
  },
  { code: 'mockapi linear-regex ajvRegExp' },
);
