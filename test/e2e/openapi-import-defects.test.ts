// `mockapi import` on what real descriptions hold, black-box: the real CLI imports small
// descriptions written here, the result is served, and each answer is checked byte for byte.
import { describe, expect, test } from 'vitest';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { runCli, startServe, useTempDir } from '../helpers/cli.js';
import { apiKeyOf, runImport } from '../helpers/openapi.js';

const temp = useTempDir('mockapi-openapi-defects-', { each: true });

const ok = (content: string): string => `      responses:\n        "200":\n          description: ok\n${content}`;
const description = (paths: string, head = 'openapi: 3.0.3\ninfo: {title: t, version: "1"}\n'): string =>
  `${head}paths:\n${paths}`;

async function serveAndGet(
  config: string,
  paths: string[],
): Promise<{ status: number; type: string | null; text: string }[]> {
  const server = await startServe(['-c', config, '--no-state', '--log', 'off']);
  try {
    const key = await apiKeyOf(config);
    const out = [];
    for (const path of paths) {
      const res = await fetch(`${server.mock}${path}`, { headers: { 'x-api-key': key } });
      out.push({ status: res.status, type: res.headers.get('content-type'), text: await res.text() });
    }
    return out;
  } finally {
    await server.stop();
  }
}

describe('imported text is data', () => {
  test('`${…}` in an example is sent as written, not evaluated', async () => {
    const spec = join(temp.path, 'api.yaml');
    await writeFile(
      spec,
      description(
        `  /t:\n    get:\n${ok('          content:\n            application/json:\n              example: {url: "https://x/${id}", raw: "$${kept}", n: 1}\n')}`,
      ),
    );
    const config = join(temp.path, 'mockapi.yaml');
    expect(await runImport(spec, config)).toMatchObject({ code: 0, stderr: expect.stringContaining('1 written') });
    const [answer] = await serveAndGet(config, ['/t']);
    expect(answer).toEqual({
      status: 200,
      type: 'application/json; charset=utf-8',
      text: JSON.stringify({ url: 'https://x/${id}', raw: '$${kept}', n: 1 }),
    });
  });

  test('a JSON null example is sent as `null` with its content type', async () => {
    const spec = join(temp.path, 'api.yaml');
    await writeFile(
      spec,
      description(
        `  /n:\n    get:\n${ok('          content:\n            application/json:\n              example: null\n')}`,
      ),
    );
    const config = join(temp.path, 'mockapi.yaml');
    expect((await runImport(spec, config)).code).toBe(0);
    expect(await serveAndGet(config, ['/n'])).toEqual([{ status: 200, type: 'application/json', text: 'null' }]);
  });
});

describe('multi-file descriptions', () => {
  test('`content: {$ref: file}` reused by two operations: both answer its example', async () => {
    await mkdir(join(temp.path, 'responses'));
    await writeFile(
      join(temp.path, 'responses', 'pet.yaml'),
      'application/json:\n  examples:\n    cat: {$ref: "../examples/cat.yaml"}\n',
    );
    await mkdir(join(temp.path, 'examples'));
    await writeFile(join(temp.path, 'examples', 'cat.yaml'), 'value: {name: Tom, lives: 9}\n');
    const spec = join(temp.path, 'api.yaml');
    const content = '          content: {$ref: "./responses/pet.yaml"}\n';
    await writeFile(spec, description(`  /a:\n    get:\n${ok(content)}  /b:\n    get:\n${ok(content)}`));
    const config = join(temp.path, 'mockapi.yaml');
    const result = await runImport(spec, config);
    expect(result.stderr).toContain('2 operations read, 2 written');
    const expected = {
      status: 200,
      type: 'application/json; charset=utf-8',
      text: JSON.stringify({ name: 'Tom', lives: 9 }),
    };
    expect(await serveAndGet(config, ['/a', '/b'])).toEqual([expected, expected]);
  });

  test('a 3.1 description with a `|+` block scalar holding only a whitespace line is read', async () => {
    const spec = join(temp.path, 'api.yaml');
    await writeFile(
      spec,
      description(
        `  /w:\n    get:\n      description: |+\n        \n\n${ok('          content:\n            text/plain:\n              example: hi\n')}`,
        'openapi: 3.1.0\ninfo: {title: t, version: "1"}\n',
      ),
    );
    const config = join(temp.path, 'mockapi.yaml');
    expect(await runImport(spec, config)).toMatchObject({ code: 0 });
    expect(await serveAndGet(config, ['/w'])).toEqual([{ status: 200, type: 'text/plain; charset=utf-8', text: 'hi' }]);
  });
});

describe('several descriptions in one config', () => {
  test("a second description keeps the first one's endpoints; each re-import removes only what its own description dropped", async () => {
    const a = join(temp.path, 'a.yaml');
    const b = join(temp.path, 'b.yaml');
    const get = (path: string) =>
      `  ${path}:\n    get:\n${ok('          content:\n            application/json:\n              example: {at: "' + path + '"}\n')}`;
    await writeFile(a, description(get('/a1') + get('/shared')));
    await writeFile(b, description(get('/b1') + get('/b2')));
    const config = join(temp.path, 'mockapi.yaml');
    expect((await runImport(a, config)).code).toBe(0);
    const second = await runImport(b, config);
    expect(second.stderr).toContain('2 operations read, 2 written');
    expect(second.stderr).not.toContain('removed');
    const text = await readFile(config, 'utf8');
    expect(text).toContain('  - openapi: GET /a1\n    openapiSpec: a.yaml\n');
    expect(text).toContain('  - openapi: GET /b1\n    openapiSpec: b.yaml\n');
    expect(await runCli(['import', a, '-c', config, '--check'])).toMatchObject({ code: 0 });
    expect(await runCli(['import', b, '-c', config, '--check'])).toMatchObject({ code: 0 });
    // b drops /b2 and adds /shared, which a holds: only /b2 goes, /shared stays a's.
    await writeFile(b, description(get('/b1') + get('/shared')));
    const third = await runImport(b, config);
    expect(third.stderr).toContain('  removed GET /b2: no longer in');
    expect(third.stderr).toContain(
      '  skipped GET /shared: GET /shared would collide with the endpoint imported from a.yaml as GET /shared',
    );
    const served = await serveAndGet(config, ['/a1', '/shared', '/b1', '/b2']);
    expect(served.map((r) => [r.status, r.text])).toEqual([
      [200, '{"at":"/a1"}'],
      [200, '{"at":"/shared"}'],
      [200, '{"at":"/b1"}'],
      [404, expect.any(String)],
    ]);
  });

  test('a config imported before descriptions were recorded: its endpoints are adopted by their description', async () => {
    const a = join(temp.path, 'a.yaml');
    const b = join(temp.path, 'b.yaml');
    const get = (path: string) => `  ${path}:\n    get:\n${ok('')}`;
    await writeFile(a, description(get('/a1')));
    await writeFile(b, description(get('/b1')));
    const config = join(temp.path, 'mockapi.yaml');
    await writeFile(
      config,
      'apiKey: k_legacy_0123456789\nendpoints:\n  # old\n  - openapi: GET /a1\n    method: GET\n    path: /a1\n    response:\n      status: 200\n    delay: 5\n',
    );
    const first = await runImport(b, config);
    expect(first.stderr).not.toContain('removed');
    const again = await runImport(a, config);
    expect(again.stderr).toContain('(0 new, 1 updated, 0 unchanged)');
    // The import adds the example `mockapi verify` sends (see verify-import.test.ts); the user's delay stays.
    expect(await readFile(config, 'utf8')).toContain(
      '  - openapi: GET /a1\n    openapiSpec: a.yaml\n    method: GET\n    path: /a1\n    response:\n      status: 200\n    verify:\n      expect: 200\n    delay: 5\n',
    );
  });
});

describe('paths whose parameters share a segment with text, and literal colons', () => {
  test('imported: `/Accounts/{Sid}.json`, `/compare/{base}...{head}` and `/levels:append` are served', async () => {
    const spec = join(temp.path, 'api.yaml');
    const get = (path: string, at: string) =>
      `  ${path}:\n    get:\n${ok('          content:\n            application/json:\n              example: {at: ' + at + '}\n')}`;
    await writeFile(
      spec,
      description(
        get('/Accounts/{Sid}.json', 'sid') +
          get('/compare/{base}...{head}', 'compare') +
          get('/levels:append', 'append') +
          get('/v1/{name}:cancel', 'cancel'),
      ),
    );
    const config = join(temp.path, 'mockapi.yaml');
    const result = await runImport(spec, config);
    expect(result.stderr).toContain('4 operations read, 3 written');
    expect(result.stderr).toContain(
      '  skipped GET /v1/{name}:cancel: the path /v1/:name::cancel has the parameter `:name` followed by `:` in `:name::cancel`: text after a parameter must start with `-` or `.`\n',
    );
    const text = await readFile(config, 'utf8');
    expect(text).toContain('    path: /Accounts/:Sid.json\n');
    expect(text).toContain('    path: /compare/:base...:head\n');
    expect(text).toContain('    path: /levels::append\n');
    const served = await serveAndGet(config, [
      '/Accounts/AC12.json',
      '/compare/main...dev',
      '/levels:append',
      '/Accounts/AC12',
      '/levels',
    ]);
    expect(served.map((r) => [r.status, r.text])).toEqual([
      [200, '{"at":"sid"}'],
      [200, '{"at":"compare"}'],
      [200, '{"at":"append"}'],
      [404, expect.any(String)],
      [404, expect.any(String)],
    ]);
  });

  test('written by hand: each parameter gets its part of the segment', async () => {
    const config = join(temp.path, 'mockapi.yaml');
    await writeFile(
      config,
      [
        'apiKey: k_0123456789abcdef',
        'endpoints:',
        '  - {method: GET, path: "/Accounts/:Sid.json", response: {body: "sid=${params.Sid}"}}',
        '  - {method: GET, path: "/compare/:base...:head/files", response: {body: "${params.base}|${params.head}"}}',
        '  - {method: GET, path: "/v-:major.:minor/x::y", response: {body: "${params.major}.${params.minor}"}}',
        '',
      ].join('\n'),
    );
    expect(await runCli(['validate', '-c', config])).toMatchObject({ code: 0 });
    const served = await serveAndGet(config, ['/Accounts/AC%2012.json', '/compare/a.b...c...d/files', '/v-2.10/x:y']);
    expect(served.map((r) => [r.status, r.text])).toEqual([
      [200, 'sid=AC 12'],
      [200, 'a.b...c|d'],
      [200, '2.10'],
    ]);
  });

  test.each([
    [
      '/a/:id:name',
      'has the parameter `:id` followed by `:` in `:id:name`: text after a parameter must start with `-` or `.`',
    ],
    ['/a/:id.:id', 'uses the parameter `:id` twice'],
    [
      '/a/x:1',
      'has an invalid parameter in `x:1`: a parameter is `:` and a name made of letters, digits and _ (write a literal `:` as `::`)',
    ],
  ])('refused: %s', async (path, problem) => {
    const config = join(temp.path, 'mockapi.yaml');
    await writeFile(config, `apiKey: k_0123456789abcdef\nendpoints:\n  - {method: GET, path: "${path}"}\n`);
    const res = await runCli(['validate', '-c', config]);
    expect(res.code).toBe(1);
    expect(res.stderr).toContain(problem);
  });
});
