import { describe, expect, test } from 'vitest';
import { compileConfig, type CompiledConfig } from '../../src/answer/compile.js';
import { ANSWER_PARTS } from '../../src/answer-parts.js';
import { parseConfig } from '../../src/config/load.js';

async function compile(yaml: string, previous?: CompiledConfig): Promise<CompiledConfig> {
  const loaded = await parseConfig(yaml, 'm.yaml');
  if (!loaded.ok) throw new Error(JSON.stringify(loaded.issues));
  return compileConfig(loaded.config, previous, { parts: ANSWER_PARTS });
}

function answer(compiled: CompiledConfig, method: string, path: string): string | undefined {
  const index = compiled.router.match(method, path);
  return index === undefined ? undefined : compiled.endpoints[index]?.body.toString();
}

const config = (body: string, second = '/b/:id') => `apiKey: k
endpoints:
  - method: GET
    path: /a
    response: { body: { v: "${body}" } }
  - method: POST
    path: ${second}
    response: { status: 201, body: { second: true } }
`;

describe('compileConfig', () => {
  test('routes a method and path to its endpoint, HEAD falling back to GET', async () => {
    const compiled = await compile(config('one'));
    expect(answer(compiled, 'GET', '/a')).toBe('{"v":"one"}');
    expect(answer(compiled, 'HEAD', '/a')).toBe('{"v":"one"}');
    expect(answer(compiled, 'POST', '/b/7')).toBe('{"second":true}');
    expect(answer(compiled, 'GET', '/b/7')).toBeUndefined();
  });

  test('a reload that keeps every route keeps the router and answers with the new endpoints', async () => {
    const first = await compile(config('one'));
    const second = await compile(config('two'), first);
    expect(second.router).toBe(first.router);
    expect(answer(second, 'GET', '/a')).toBe('{"v":"two"}');
    expect(answer(first, 'GET', '/a')).toBe('{"v":"one"}'); // the old config is left as it was
  });

  test('a reload that changes a route builds a new router', async () => {
    const first = await compile(config('one'));
    const moved = await compile(config('one', '/c/:id'), first);
    expect(moved.router).not.toBe(first.router);
    expect(answer(moved, 'POST', '/c/1')).toBe('{"second":true}');
    expect(answer(moved, 'POST', '/b/1')).toBeUndefined();
    const reordered = await compile(
      config('one').replace(/  - method: GET\n    path: \/a\n.*\n/, '') +
        '  - method: GET\n    path: /a\n    response: { body: { v: "one" } }\n',
      first,
    );
    expect(reordered.router).not.toBe(first.router);
    expect(answer(reordered, 'GET', '/a')).toBe('{"v":"one"}');
  });
});
