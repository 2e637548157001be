/**
 * A faster `helpers.fake`, `helpers.mustache` and `string.uuid` for one faker instance, giving the
 * same text from the same draws.
 *
 * Faker builds most of its values from patterns (`{{person.firstName}} {{person.lastName}}`):
 * `helpers.fake` finds each `{{token}}` and resolves the token's path anew on every call (a regex
 * split per step, a walk of two entry points, arrays filtered and copied), which is most of the
 * cost of `fake.person.fullName()` and its kind. The path of a token never changes, so it is
 * resolved once here; each call then makes only the draws faker makes — one `arrayElement` per
 * list found at the token's last step, in the same order — and calls the method found, as faker
 * does. A token faker would resolve in some other way (a function met mid-path, a list before the
 * last step, `(` arguments, an error) is left to faker's own `fake` for the rest of the pattern.
 * Written against @faker-js/faker 10.6.0 (pinned); test/unit/answer/faker-fake.test.ts compares the
 * two on every method. `mustache` and `string.uuid` are replaced the same way: faker's own steps and
 * draws, without the per-call RegExp building and callbacks (comments at each say what is kept).
 */

/** The slice of a faker instance this module reads and replaces. */
export interface FakeableFaker {
  readonly helpers: {
    fake: (pattern: string | readonly string[]) => string;
    mustache: (
      text: string | undefined,
      data: Record<string, string | ((substring: string, ...args: unknown[]) => string)>,
    ) => string;
    arrayElement: (list: readonly unknown[]) => unknown;
  };
  readonly string: { uuid: (options?: unknown) => string };
  readonly definitions: { readonly raw: unknown };
  /** Where faker's number.int draws: `fakerCore.randomizer.next()`. */
  readonly fakerCore: { readonly randomizer: { next(): number } };
}

/** What a token resolves to at its last step: the values found there, before faker draws from lists. */
type Resolved = readonly unknown[] | undefined;

/** Faker's walk (`fakeEval`) of a token, done without drawing; undefined where it would draw or call before the end. */
function resolveToken(token: string, entries: readonly unknown[]): Resolved {
  if (token === '' || token.includes('(')) return undefined;
  const parts = token.split('.');
  let found: readonly unknown[] = entries;
  for (let step = 0; step < parts.length; step++) {
    const part = parts[step] as string;
    if (part === '') return undefined;
    const next: unknown[] = [];
    for (const candidate of found) {
      if (typeof candidate === 'function') return undefined; // faker would call it to walk on
      const value =
        typeof candidate === 'object' && candidate !== null ? (candidate as Record<string, unknown>)[part] : undefined;
      if (value !== null && value !== undefined) next.push(value);
    }
    if (next.length === 0) return undefined; // faker throws: its own fake says so
    if (step < parts.length - 1 && next.some((value) => Array.isArray(value))) return undefined; // a draw mid-path
    found = next;
  }
  return found;
}

/**
 * A pattern split once at its tokens: the literal text before each token, the token, and the text
 * after the last one. faker's loop searches the whole text again after every substitution; when
 * no value contains `{` and no literal before a token ends with `{` (checked by {@link splitPattern}
 * at compile time, the value at run time), that search finds the next token of this list, so
 * walking the list is the same loop without the searching.
 */
interface SplitPattern {
  readonly literals: readonly string[];
  readonly tokens: readonly string[];
  /** Where each token's `{{` starts in the pattern, to hand faker the rest when a token needs it. */
  readonly starts: readonly number[];
  readonly tail: string;
}

const START = /{{[a-z]/;

/** The token between `{{` at `start` and `}}` at `end`, read as faker reads it (nested braces dropped once). */
function tokenAt(pattern: string, start: number, end: number): string {
  return pattern
    .substring(start + 2, end + 2)
    .replace('}}', '')
    .replace('{{', '');
}

/** Splits `pattern` as faker's loop would meet its tokens; undefined when a literal ends with `{`. */
function splitPattern(pattern: string): SplitPattern | undefined {
  const literals: string[] = [];
  const tokens: string[] = [];
  const starts: number[] = [];
  let from = 0;
  for (;;) {
    const found = pattern.slice(from).search(START);
    const start = found === -1 ? -1 : from + found;
    const end = start === -1 ? -1 : pattern.indexOf('}}', start);
    if (start === -1 || end === -1) return { literals, tokens, starts, tail: pattern.slice(from) };
    const literal = pattern.slice(from, start);
    if (literal.endsWith('{')) return undefined;
    literals.push(literal);
    tokens.push(tokenAt(pattern, start, end));
    starts.push(start);
    from = end + 2;
  }
}

/** Replaces `faker.helpers.fake` with the cached-path version; returns the same instance. */
export function installFastFake<T extends FakeableFaker>(faker: T): T {
  const { helpers } = faker;
  const original = helpers.fake;
  const entries = [faker, faker.definitions.raw];
  const tokens = new Map<string, Resolved>();
  const patterns = new Map<string, SplitPattern | undefined>();

  function resolved(token: string): Resolved {
    let found = tokens.get(token);
    if (found === undefined && !tokens.has(token)) tokens.set(token, (found = resolveToken(token, entries)));
    return found;
  }

  /** One token's value, with faker's draws: one `arrayElement` per list found at its last step, in order. */
  function valueOf(values: readonly unknown[]): string {
    let first: unknown;
    for (let i = 0; i < values.length; i++) {
      const value = values[i];
      const drawn = Array.isArray(value) ? helpers.arrayElement(value) : value;
      if (i === 0) first = drawn;
    }
    return String(typeof first === 'function' ? (first as () => unknown)() : first);
  }

  /** faker's own loop, with token paths cached: for a pattern that cannot be split, or what is left of one. */
  function loop(pattern: string): string {
    for (;;) {
      const start = pattern.search(START);
      const end = pattern.indexOf('}}', start);
      if (start === -1 || end === -1) return pattern;
      const values = resolved(tokenAt(pattern, start, end));
      if (values === undefined) return original(pattern);
      pattern = pattern.substring(0, start) + valueOf(values) + pattern.substring(end + 2);
    }
  }

  helpers.fake = (input) => {
    const pattern = typeof input === 'string' ? input : (helpers.arrayElement(input) as string);
    let split = patterns.get(pattern);
    if (split === undefined && !patterns.has(pattern)) patterns.set(pattern, (split = splitPattern(pattern)));
    if (split === undefined) return loop(pattern);
    let out = '';
    for (let i = 0; i < split.tokens.length; i++) {
      out += split.literals[i] as string;
      const values = resolved(split.tokens[i] as string);
      if (values === undefined) return original(out + pattern.slice(split.starts[i] as number));
      const value = valueOf(values);
      // A value with `{` may start a token of its own: faker's search would find it next.
      if (value.includes('{'))
        return loop(out + value + pattern.slice(pattern.indexOf('}}', split.starts[i] as number) + 2));
      out += value;
    }
    return out + split.tail;
  };

  // faker's mustache builds a RegExp per key on every call (five per `person.fullName()`); the
  // same expressions, made once, replace the same way: a global RegExp starts from 0 in `replace`.
  const expressions = new Map<string, RegExp>();
  helpers.mustache = (text, data) => {
    if (text === undefined || text === null) return '';
    for (const key in data) {
      let expression = expressions.get(key);
      if (expression === undefined) expressions.set(key, (expression = new RegExp(`{{${key}}}`, 'g')));
      let value = data[key] as string | ((substring: string, ...args: unknown[]) => string);
      if (typeof value === 'string') value = value.replaceAll('$', '$$$$');
      text = text.replace(expression, value as string);
    }
    return text;
  };

  // faker's uuid (v4) replaces each `x` of its template with `number.hex({ min: 0, max: 15 })`,
  // then the `y` with one of 8–b, through a callback and an options object per digit: the same
  // draws, in the same order, turned into digits directly. Other versions stay faker's.
  const { string } = faker;
  const uuid = string.uuid;
  const { randomizer } = faker.fakerCore;
  string.uuid = (options?: unknown) => (options === undefined ? uuidV4(randomizer) : uuid(options));
  return faker;
}

const HEX = '0123456789abcdef';
const UUID_TEMPLATE = 'xxxxxxxx-xxxx-4xxx-yxxx-xxxxxxxxxxxx';

/** faker's `string.uuid()`: 30 draws for the `x`s left to right, then one for the `y`. */
function uuidV4(randomizer: { next(): number }): string {
  const digits: string[] = [];
  for (let i = 0; i < 30; i++) digits.push(HEX[Math.floor(randomizer.next() * 16)] as string);
  const variant = HEX[Math.floor(randomizer.next() * 4 + 8)] as string;
  let out = '';
  let next = 0;
  for (const c of UUID_TEMPLATE) out += c === 'x' ? digits[next++] : c === 'y' ? variant : c;
  return out;
}
