// Patterns from a config (`matches`) and from an OpenAPI description (`pattern`) run on a
// linear-time engine. A fuzz proves the bound: every pattern the engine accepts has a program of at
// most MAX_PROGRAM instructions, so one test takes at most WORK_BUDGET steps (2 KiB × 256), and it
// answers as JavaScript's RegExp does on ordinary input. Then, black-box: `^(a+)+$` in a description
// no longer freezes the server on one request.
import fc from 'fast-check';
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, test } from 'vitest';
import { compileLinear, MAX_PROGRAM, WORK_BUDGET } from '../../src/regex/linear-regex.js';
import { startServe, useTempDir } from '../helpers/cli.js';

const KEY = 'mk_hostileRegex0000000000000000001';
const temp = useTempDir('mockapi-hostile-regex-');

/** Patterns built from the parts that make backtracking engines explode: nested, bounded and alternated repeats, case folding. */
const ATOMS = ['a', 'b', 'k', '.', '\\d', '\\w', '[a-z]', '[^b]', '\\p{L}', 'K', '\\u212A', '(?:a|ab)', '(a|aa)', 'a?'];
const QUANTS = ['', '*', '+', '?', '{1,63}', '{2,5}', '{1,10}', '{0,30}', '{3}', '*?'];
const pattern: fc.Arbitrary<string> = fc.letrec<{ node: string }>((tie) => ({
  node: fc.oneof(
    { depthSize: 'small' },
    fc.constantFrom(...ATOMS),
    fc.tuple(tie('node'), fc.constantFrom(...QUANTS)).map(([a, q]) => `(${a})${q}`),
    fc.array(tie('node'), { minLength: 1, maxLength: 3 }).map((xs) => xs.join('')),
    fc.tuple(tie('node'), tie('node')).map(([a, b]) => `(?:${a}|${b})`),
  ),
})).node;
const ADVERSARIAL = [
  'a'.repeat(2048) + '!',
  'ab'.repeat(1024) + '!',
  'k'.repeat(2047) + '\u212A!',
  'a.'.repeat(1024),
  '1'.repeat(2048) + 'x',
  'é'.repeat(2048),
];

describe('the linear-time engine, fuzzed', () => {
  test('every accepted pattern is bounded (program ≤ MAX_PROGRAM, input ≤ WORK_BUDGET / program) and finishes adversarial input', () => {
    let accepted = 0;
    fc.assert(
      fc.property(pattern, fc.constantFrom('', 'i', 'u', 'iu', 'm', 's'), fc.boolean(), (body, flags, anchored) => {
        const source = anchored ? `^${body}$` : body;
        try {
          new RegExp(source, flags);
        } catch {
          return; // not JavaScript: the config's own check says so first
        }
        const compiled = compileLinear(source, flags);
        if (!compiled.ok) {
          expect(compiled.reason).toMatch(/linear time|too large to be matched quickly/);
          return;
        }
        accepted++;
        const { regex } = compiled;
        expect(regex.program).toBeLessThanOrEqual(MAX_PROGRAM);
        expect(regex.program * Math.min(regex.inputLimit, 2049)).toBeLessThanOrEqual(WORK_BUDGET + MAX_PROGRAM);
        // The bound is in steps, not time: each of these is at most WORK_BUDGET instruction steps.
        // A backtracking engine takes minutes on some of them; the test's timeout (60 s, for
        // hundreds of patterns) is the only clock, and it would name an engine gone exponential.
        for (const input of ADVERSARIAL) regex.test(input);
      }),
      { numRuns: 300, seed: 38 },
    );
    expect(accepted).toBeGreaterThan(150);
  }, 60_000);

  test('on ordinary input it answers as JavaScript does', () => {
    fc.assert(
      fc.property(
        pattern,
        fc.constantFrom('', 'u', 'iu'),
        fc.array(fc.constantFrom('a', 'b', 'k', 'K', '1', '.', '!', 'é'), { maxLength: 10 }),
        (body, flags, chars) => {
          const source = `^${body}$`;
          let native: RegExp;
          try {
            native = new RegExp(source, flags);
          } catch {
            return;
          }
          // Without `u`, JavaScript reads `\p{L}` as the letters p{L} and folds K and the Kelvin sign
          // apart; the engine always reads a Unicode class and folds them together (documented).
          if ((source.includes('\\u212A') || source.includes('\\p')) && !flags.includes('u')) return;
          const compiled = compileLinear(source, flags);
          if (!compiled.ok) return;
          const text = chars.join('');
          expect(compiled.regex.test(text), `${native} on ${JSON.stringify(text)}`).toBe(native.test(text));
        },
      ),
      { numRuns: 500, seed: 38 },
    );
  }, 60_000);
});

describe('OpenAPI patterns', () => {
  test('`^(a+)+$` on a query parameter and a body field: adversarial input is answered at once, violations reported', async () => {
    const dir = join(temp.path, 'openapi');
    await mkdir(dir, { recursive: true });
    await writeFile(
      join(dir, 'api.yaml'),
      `openapi: 3.0.3
info: { title: t, version: '1' }
paths:
  /items:
    post:
      parameters:
        - { name: q, in: query, schema: { type: string, pattern: '^(a+)+$' } }
      requestBody:
        content:
          application/json:
            schema:
              type: object
              properties:
                name: { type: string, pattern: '^(\\w+\\s?)*$' }
                pair: { type: string, pattern: '^(\\w)\\1$' }
      responses: { '200': { description: ok } }
`,
    );
    await writeFile(
      join(dir, 'mockapi.yaml'),
      `apiKey: ${KEY}\nopenapi:\n  spec: ./api.yaml\nendpoints:\n  - method: POST\n    path: /items\n    response: { body: { ok: true } }\n`,
    );
    const s = await startServe(['-c', join(dir, 'mockapi.yaml'), '--no-state', '--no-watch']);
    // With a backtracking engine one of these requests holds the server for minutes; the timeout names that cause.
    const post = (query: string, body: unknown) =>
      fetch(`${s.mock}/items?q=${query}`, {
        method: 'POST',
        headers: { 'x-api-key': KEY, 'content-type': 'application/json' },
        body: JSON.stringify(body),
        signal: AbortSignal.timeout(20_000),
      });
    const bad = await post(`${'a'.repeat(5000)}!`, { name: `${'a '.repeat(3000)}!`, pair: 'xy' });
    expect(bad.status).toBe(200);
    // q and name break their patterns; pair's backreference cannot run in linear time and is not checked.
    expect(bad.headers.get('x-mockapi-violations')).toBe('2');
    const good = await post('aaa', { name: 'ada lovelace', pair: 'zz' });
    expect(good.headers.get('x-mockapi-violations')).toBeNull();
    expect(s.child.exitCode).toBeNull();
  });
});
