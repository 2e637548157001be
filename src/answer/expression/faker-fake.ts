/**
 * A faster `helpers.fake` for one faker instance, giving the same text from the same draws.
 *
 * Faker builds most of its values from patterns (`{{person.firstName}} {{person.lastName}}`):
 * `helpers.fake` finds each `{{token}}` and resolves the token's path anew on every call (a regex
 * split per step, a walk of two entry points, arrays filtered and copied), which is most of the
 * cost of `fake.person.fullName()` and its kind. The path of a token never changes, so it is
 * resolved once here; each call then makes only the draws faker makes — one `arrayElement` per
 * list found at the token's last step, in the same order — and calls the method found, as faker
 * does. A token faker would resolve in some other way (a function met mid-path, a list before the
 * last step, `(` arguments, an error) is left to faker's own `fake` for the rest of the pattern.
 * Written against @faker-js/faker 10.6.0 (pinned); test/answer/faker-fake.test.ts compares the
 * two on every method.
 */

/** The slice of a faker instance this module reads and replaces. */
export interface FakeableFaker {
  readonly helpers: { fake: (pattern: string | readonly string[]) => string; arrayElement: (list: readonly unknown[]) => unknown };
  readonly definitions: { readonly raw: unknown };
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
      const value = typeof candidate === 'object' && candidate !== null ? (candidate as Record<string, unknown>)[part] : undefined;
      if (value !== null && value !== undefined) next.push(value);
    }
    if (next.length === 0) return undefined; // faker throws: its own fake says so
    if (step < parts.length - 1 && next.some((value) => Array.isArray(value))) return undefined; // a draw mid-path
    found = next;
  }
  return found;
}

/** Replaces `faker.helpers.fake` with the cached-path version; returns the same instance. */
export function installFastFake<T extends FakeableFaker>(faker: T): T {
  const { helpers } = faker;
  const original = helpers.fake;
  const entries = [faker, faker.definitions.raw];
  const cache = new Map<string, Resolved>();
  const START = /{{[a-z]/;
  helpers.fake = (input) => {
    let pattern = typeof input === 'string' ? input : (helpers.arrayElement(input) as string);
    for (;;) {
      const start = pattern.search(START);
      const end = pattern.indexOf('}}', start);
      if (start === -1 || end === -1) return pattern;
      const token = pattern.substring(start + 2, end + 2).replace('}}', '').replace('{{', '');
      let resolved = cache.get(token);
      if (resolved === undefined && !cache.has(token)) cache.set(token, (resolved = resolveToken(token, entries)));
      if (resolved === undefined) return original(pattern);
      // faker draws from every list found at the last step, in order, then takes the first value.
      let first: unknown;
      for (let i = 0; i < resolved.length; i++) {
        const value = resolved[i];
        const drawn = Array.isArray(value) ? helpers.arrayElement(value) : value;
        if (i === 0) first = drawn;
      }
      const result = typeof first === 'function' ? (first as () => unknown)() : first;
      pattern = pattern.substring(0, start) + String(result) + pattern.substring(end + 2);
    }
  };
  return faker;
}
