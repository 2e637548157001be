// An imported config repeats a few `Prefer` patterns thousands of times (GitHub's: 2,278 `when`s
// over 68 patterns), and compiling one on the linear engine costs milliseconds: each pattern is
// compiled once per process, and every `when` that uses it shares it.
import { describe, expect, test, vi } from 'vitest';

const compiled: string[] = [];
vi.mock('../../../src/regex/linear-regex.js', async (importOriginal) => {
  const original = await importOriginal<typeof import('../../../src/regex/linear-regex.js')>();
  return {
    ...original,
    compileLinear: (source: string, flags?: string) => {
      compiled.push(source);
      return original.compileLinear(source, flags);
    },
  };
});

const { compileWhen } = await import('../../../src/expression/matchers.js');
const { preferCodeWhen, preferWhen } = await import('../../../src/openapi/render.js');

describe('Prefer matchers of an imported config', () => {
  test('compile each pattern once, however many responses use it, and each still tests its own status', () => {
    const whens = [];
    for (let endpoint = 0; endpoint < 500; endpoint++)
      for (const status of [401, 403, 404, 422]) {
        const when = compileWhen(preferCodeWhen(status));
        expect(when.ok).toBe(true);
        if (when.ok) whens.push([status, when.value] as const);
      }
    expect(compileWhen(preferWhen('cat')).ok).toBe(true);
    expect(compileWhen(preferWhen('cat')).ok).toBe(true);
    expect(compiled.filter((source) => source.includes('code=')).length).toBe(4);
    expect(compiled.filter((source) => source.includes('example=')).length).toBe(1);
    const ctx = (prefer: string) => ({ headers: { prefer } }) as never;
    for (const [status, when] of whens.slice(0, 8)) {
      expect(when.test(ctx(`code=${status}`))).toBe(true);
      expect(when.test(ctx(`respond-async, code="${status}"`))).toBe(true);
      expect(when.test(ctx(`code=${status}0`))).toBe(false);
    }
  });
});
