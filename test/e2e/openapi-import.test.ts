// `mockapi import` (SPEC §11), black-box: the real CLI imports the committed descriptions, the
// result validates and serves, merges keep the user's bytes, re-imports change nothing, --check
// reports drift, bad input fails with exit 1 and leaves the config alone.
import { describe, expect, test } from 'vitest';
import { copyFile, cp, mkdir, readFile, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { runCli, startServe, useTempDir } from '../helpers/cli.js';
import { apiKeyOf, OPENAPI_FIXTURES, runImport } from '../helpers/openapi.js';

const temp = useTempDir('mockapi-openapi-', { each: true });
const fixture = (name: string): string => join(OPENAPI_FIXTURES, name);

async function get(url: string, key: string, method = 'GET'): Promise<{ status: number; body: unknown }> {
  const res = await fetch(url, { method, headers: { 'x-api-key': key } });
  const text = await res.text();
  return { status: res.status, body: text === '' ? '' : JSON.parse(text) };
}

describe('importing real descriptions', () => {
  test.each([
    ['petstore.yaml', 3, 3, 2],
    ['petstore-expanded.yaml', 4, 4, 3],
    ['api-with-examples.yaml', 2, 2, 0],
    ['uspto.yaml', 3, 3, 2],
    ['galaxy-3.1.yaml', 9, 9, 8],
    ['blockfrost/openapi.yaml', 129, 129, 129],
  ])(
    '%s: imports, validates, and a re-import changes no byte',
    async (name, read, written, generated) => {
      const config = join(temp.path, 'mockapi.yaml');
      const first = await runImport(fixture(name), config);
      expect(first.stderr).toContain(
        `${read} operation${read === 1 ? '' : 's'} read, ${written} written to ${config} (${written} new, 0 updated, 0 unchanged), ${generated} generated from schemas, 0 skipped`,
      );
      expect(first).toMatchObject({ code: 0, stdout: '' });
      expect(await runCli(['validate', '-c', config])).toMatchObject({
        code: 0,
        stdout: `${config} is valid (${written} endpoint${written === 1 ? '' : 's'})\n`,
      });
      const bytes = await readFile(config);
      const mtime = (await stat(config)).mtimeMs;
      const again = await runImport(fixture(name), config);
      expect(again.code).toBe(0);
      expect(again.stderr).toContain(`(0 new, 0 updated, ${written} unchanged)`);
      expect(again.stderr).toContain(`${config} is up to date; nothing was written`);
      expect(await readFile(config)).toEqual(bytes);
      expect((await stat(config)).mtimeMs).toBe(mtime);
    },
    60_000,
  ); // Blockfrost's 129 operations bring 720 error answers in: seconds on a busy machine

  test('petstore: served under the server path, generated bodies typed from the schemas', async () => {
    const config = join(temp.path, 'mockapi.yaml');
    expect((await runImport(fixture('petstore.yaml'), config)).code).toBe(0);
    const text = await readFile(config, 'utf8');
    expect(text).toMatch(
      / {2}# Info for a specific pet\n {2}- openapi: GET \/pets\/\{petId\}\n {4}openapiSpec: \S*test\/fixtures\/openapi\/petstore\.yaml\n {4}method: GET\n {4}path: \/v1\/pets\/:petId\n/,
    );
    const key = await apiKeyOf(config);
    const server = await startServe(['-c', config, '--no-state', '--log', 'off']);
    try {
      expect(await get(`${server.mock}/v1/pets`, key)).toEqual({
        status: 200,
        body: [{ id: 0, name: 'string', tag: 'string' }],
      });
      expect(await get(`${server.mock}/v1/pets/7`, key)).toEqual({
        status: 200,
        body: { id: 0, name: 'string', tag: 'string' },
      });
      expect(await get(`${server.mock}/v1/pets`, key, 'POST')).toEqual({ status: 201, body: '' });
      expect((await get(`${server.mock}/v1/pets`, 'wrong')).status).toBe(401);
    } finally {
      await server.stop();
    }
  });

  test('uspto and api-with-examples: the lowest 2xx example is the answer; a server variable takes its default', async () => {
    const uspto = join(temp.path, 'uspto.yaml');
    const versions = join(temp.path, 'versions.yaml');
    expect((await runImport(fixture('uspto.yaml'), uspto)).code).toBe(0);
    expect((await runImport(fixture('api-with-examples.yaml'), versions)).code).toBe(0);
    const a = await startServe(['-c', uspto, '--no-state', '--log', 'off']);
    const b = await startServe(['-c', versions, '--no-state', '--log', 'off']);
    try {
      const list = await get(`${a.mock}/ds-api`, await apiKeyOf(uspto));
      expect(list.status).toBe(200);
      expect((list.body as { total: number; apis: { apiKey: string }[] }).apis.map((x) => x.apiKey)).toEqual([
        'oa_citations',
        'cancer_moonshot',
      ]);
      expect(await get(`${a.mock}/ds-api/oa_citations/v1/fields`, await apiKeyOf(uspto))).toEqual({
        status: 200,
        body: 'string',
      });
      const details = await get(`${b.mock}/v2`, await apiKeyOf(versions));
      expect(details.status).toBe(200); // 200 beats 203
      expect((details.body as { version: { links: { href: string }[] } }).version.links[0]?.href).toBe(
        'http://127.0.0.1:8774/v2/',
      );
    } finally {
      await a.stop();
      await b.stop();
    }
  });

  test('github: 296 operations in files joined by relative $refs (one with `{base}...{head}`) import, validate, serve, and re-import without a changed byte', async () => {
    const config = join(temp.path, 'mockapi.yaml');
    const first = await runImport(fixture('github/openapi.yaml'), config);
    expect(first).toMatchObject({ code: 0, stdout: '' });
    expect(first.stderr).toContain(
      `296 operations read, 296 written to ${config} (296 new, 0 updated, 0 unchanged), 0 generated from schemas, 0 skipped`,
    );
    expect(await readFile(config, 'utf8')).toContain('    path: /repos/:owner/:repo/compare/:base...:head\n');
    // One example object is reached from two operations; bundling leaves a `$ref` at the second.
    expect(await readFile(config, 'utf8')).not.toContain('$ref');
    // Watchdogs against a hang only (the test's timeout bounds it): a 1 MiB config is seconds of CPU to check and to start.
    expect(await runCli(['validate', '-c', config], { timeoutMs: 120_000 })).toMatchObject({
      code: 0,
      stdout: `${config} is valid (296 endpoints)\n`,
    });

    const key = await apiKeyOf(config);
    const server = await startServe(['-c', config, '--no-state', '--log', 'off'], { timeoutMs: 120_000 });
    try {
      const comment = await get(`${server.mock}/repos/o/r/issues/comments/5`, key); // the static segment wins over :issue_number
      expect(comment.status).toBe(200);
      expect(comment.body).toMatchObject({ id: 1, body: 'Me too', user: { login: 'octocat' } });
      const created = await get(`${server.mock}/repos/o/r/issues`, key, 'POST');
      expect(created.status).toBe(201);
      expect(created.body).toMatchObject({ id: 1, number: 1347, title: 'Found a bug', state: 'open' });
      const issue = await fetch(`${server.mock}/repos/o/r/issues/7`, {
        headers: { 'x-api-key': key, prefer: 'example=default' },
      });
      expect(issue.status).toBe(200);
      expect(JSON.parse(await issue.text())).toMatchObject({ value: { id: 1, number: 1347, title: 'Found a bug' } });
      expect(await get(`${server.mock}/repos/o/r/pulls/3/merge`, key, 'PUT')).toEqual({
        status: 200,
        body: {
          sha: '6dcb09b5b57875f334f61aebed695e2e4193db5e',
          merged: true,
          message: 'Pull Request successfully merged',
        },
      });
      expect(await get(`${server.mock}/repos/o/r/labels/bug`, key, 'DELETE')).toEqual({ status: 204, body: '' });
      expect((await get(`${server.mock}/repos/o/r`, 'wrong')).status).toBe(401);
    } finally {
      await server.stop();
    }

    const bytes = await readFile(config);
    const again = await runImport(fixture('github/openapi.yaml'), config);
    expect(again.code).toBe(0);
    expect(again.stderr).toContain('(0 new, 0 updated, 296 unchanged)');
    expect(await readFile(config)).toEqual(bytes);
  }, 180_000); // two imports, a validate and a start of a 1 MiB config: seconds each on a busy machine, with other files running beside

  test('a $ref inside an example value is followed at any depth; one back into the value stays a reference', async () => {
    const ref = (to: string): string => `{ $ref: '#/components/examples/${to}/value' }`;
    const examples = `components:\n  examples:\n    user: { value: { login: octocat } }\n    loop: { value: { self: ${ref('loop')} } }\n`;
    const media = (example: string): string =>
      `      responses:\n        '200':\n          description: ok\n          content:\n            application/json:\n              ${example}\n`;
    const spec = join(temp.path, 'refs.yaml');
    const paths = `paths:\n  /named:\n    get:\n${media(`examples: { a: { value: ${ref('user')} }, b: { value: { owner: ${ref('user')}, loop: ${ref('loop')} } } }`)}  /single:\n    get:\n${media(`example: { users: [${ref('user')}] }`)}`;
    await writeFile(spec, `openapi: 3.0.3\ninfo: { title: refs, version: '1' }\n${paths}${examples}`);
    const config = join(temp.path, 'mockapi.yaml');
    expect((await runImport(spec, config)).code).toBe(0);
    const key = await apiKeyOf(config);
    const server = await startServe(['-c', config, '--no-state', '--log', 'off']);
    try {
      expect(await get(`${server.mock}/named`, key)).toEqual({ status: 200, body: { login: 'octocat' } });
      const b = await fetch(`${server.mock}/named`, { headers: { 'x-api-key': key, prefer: 'example=b' } });
      expect(JSON.parse(await b.text())).toEqual({
        owner: { login: 'octocat' },
        loop: { self: { $ref: '#/components/examples/loop/value' } },
      });
      expect(await get(`${server.mock}/single`, key)).toEqual({ status: 200, body: { users: [{ login: 'octocat' }] } });
    } finally {
      await server.stop();
    }
  });
});

const USER_CONFIG = `# my mock — hand-written
apiKey: mk_userKey000000000000000000000000   # rotate me
server:
  port: 0

endpoints:
  # mine, with a comment
  - method: GET
    path: /health-check
    response: { status: 204 }    # flow style stays

  - method: GET
    path: /v1/pets/:id   # takes the route of GET /pets/{petId}
    response:
      body: { mine: true }
# trailing comment
`;

describe('merging into an existing config', () => {
  test("keeps the user's endpoints and comments byte for byte, skips a colliding operation, updates imported ones in place", async () => {
    const config = join(temp.path, 'mockapi.yaml');
    await writeFile(config, USER_CONFIG);
    const spec = join(temp.path, 'petstore.yaml');
    await copyFile(fixture('petstore.yaml'), spec);
    const res = await runImport(spec, config);
    expect(res.code).toBe(0);
    expect(res.stderr).toContain('3 operations read, 2 written');
    expect(res.stderr).toContain(
      '  skipped GET /pets/{petId}: GET /v1/pets/:petId would collide with your endpoint GET /v1/pets/:id\n',
    );
    const merged = await readFile(config, 'utf8');
    const userPart = USER_CONFIG.slice(0, USER_CONFIG.indexOf('# trailing comment'));
    expect(merged.startsWith(userPart)).toBe(true);
    expect(merged.endsWith('\n# trailing comment\n')).toBe(true);
    expect(merged).toContain('  # List all pets\n  - openapi: GET /pets\n');

    // The user tunes an imported endpoint; the next import keeps that and changes nothing else.
    const tuned = merged.replace(
      '  - openapi: GET /pets\n    openapiSpec: petstore.yaml\n    method: GET\n    path: /v1/pets\n',
      '  - openapi: GET /pets\n    openapiSpec: petstore.yaml\n    method: GET\n    path: /v1/pets\n    failRate: 0.5\n',
    );
    expect(tuned).not.toBe(merged);
    await writeFile(config, tuned);
    const again = await runImport(spec, config);
    expect(again.stderr).toContain('(0 new, 0 updated, 2 unchanged)');
    expect(await readFile(config, 'utf8')).toBe(tuned);

    // A changed description updates the imported endpoint where it stands and keeps failRate.
    await writeFile(
      spec,
      (await readFile(fixture('petstore.yaml'), 'utf8'))
        .replace('      summary: List all pets\n', '      summary: List every pet\n')
        .replace(
          "        '200':\n          description: A paged array of pets",
          "        '206':\n          description: A paged array of pets",
        ),
    );
    const updated = await runImport(spec, config);
    expect(updated.stderr).toContain('(0 new, 1 updated, 1 unchanged)');
    const text = await readFile(config, 'utf8');
    expect(text.startsWith(userPart)).toBe(true);
    expect(text).toContain(
      '  # List every pet\n  - openapi: GET /pets\n    openapiSpec: petstore.yaml\n    method: GET\n    path: /v1/pets\n    response:\n      status: 206\n',
    );
    expect(text).toContain('    failRate: 0.5\n');
    expect(text).not.toContain('List all pets');
    expect((await runCli(['validate', '-c', config])).code).toBe(0);
  });
});

describe('--check', () => {
  test('exit 0 in sync; exit 1 naming an added and a removed operation; changes nothing', async () => {
    const config = join(temp.path, 'mockapi.yaml');
    const spec = join(temp.path, 'petstore.yaml');
    await copyFile(fixture('petstore.yaml'), spec);
    expect((await runImport(spec, config)).code).toBe(0);
    expect(await runImport(spec, config, ['--check'])).toEqual({
      code: 0,
      stdout: '',
      stderr: `${config} is in sync with ${spec} (3 operations)\n`,
    });

    const original = await readFile(spec, 'utf8');
    // POST /pets removed, DELETE /pets/{petId} added
    const edited = original
      .replace(/    post:\n      summary: Create a pet[\s\S]*?(?=  \/pets\/\{petId\}:)/, '')
      .replace(
        'components:\n',
        "    delete:\n      summary: Delete a pet\n      responses:\n        '204':\n          description: gone\ncomponents:\n",
      );
    await writeFile(spec, edited);
    const before = await readFile(config);
    const res = await runImport(spec, config, ['--check']);
    expect(res.code).toBe(1);
    expect(res.stderr).toBe(
      `${config} is out of sync with ${spec}: 1 missing, 1 stale; run \`mockapi import ${spec} -c ${config}\` to update it\n` +
        `  missing DELETE /pets/{petId}: in ${spec}, not in ${config}\n` +
        `  stale POST /pets: imported into ${config}, no longer in ${spec}\n`,
    );
    expect(await readFile(config)).toEqual(before);

    const fix = await runImport(spec, config);
    expect(fix.stderr).toContain('(1 new, 0 updated, 2 unchanged)');
    expect(fix.stderr).toContain(`  removed POST /pets: no longer in ${spec}\n`);
    expect((await runImport(spec, config, ['--check'])).code).toBe(0);
  });

  test('the same description at another path compares nothing: exit 1 naming the path the config names', async () => {
    const config = join(temp.path, 'mockapi.yaml');
    const spec = join(temp.path, 'petstore.yaml');
    await copyFile(fixture('petstore.yaml'), spec);
    expect((await runImport(spec, config)).code).toBe(0);
    // CI downloads the description elsewhere: every operation collides with those imported from petstore.yaml.
    await mkdir(join(temp.path, 'download'));
    const elsewhere = join(temp.path, 'download', 'petstore.yaml');
    await copyFile(fixture('petstore.yaml'), elsewhere);
    const before = await readFile(config);
    const res = await runImport(elsewhere, config, ['--check']);
    expect(res.code).toBe(1);
    const lines = res.stderr.split('\n');
    expect(lines[0]).toBe(
      `${config} cannot be checked against ${elsewhere}: nothing was compared; every one of its 3 operations collides with an endpoint ${config} imported from "petstore.yaml" (its openapiSpec); to check that description, run \`mockapi import petstore.yaml -c ${config} --check\` from the config's folder`,
    );
    expect(lines[1]).toBe(
      '  skipped GET /pets: GET /v1/pets would collide with the endpoint imported from petstore.yaml as GET /v1/pets',
    );
    expect(await readFile(config)).toEqual(before);
  });

  test('a config that does not exist is out of sync', async () => {
    const config = join(temp.path, 'none.yaml');
    expect(await runImport(fixture('petstore.yaml'), config, ['--check'])).toMatchObject({ code: 1 });
  });
});

describe('bad input fails cleanly and leaves the config alone', () => {
  async function expectRefused(specText: Record<string, string>, entry: string, message: string): Promise<void> {
    for (const [name, text] of Object.entries(specText)) await writeFile(join(temp.path, name), text);
    const config = join(temp.path, 'mockapi.yaml');
    await writeFile(config, USER_CONFIG);
    const res = await runImport(entry, config, [], temp.path);
    expect(res).toEqual({ code: 1, stdout: '', stderr: `${message}\n${config} was left unchanged\n` });
    expect(await readFile(config, 'utf8')).toBe(USER_CONFIG);
  }

  test('not OpenAPI', () =>
    expectRefused(
      { 'a.yaml': 'hello: world\n' },
      'a.yaml',
      'a.yaml is not an OpenAPI document (no `openapi:` version field)',
    ));

  test('Swagger 2.0: says so and how to convert', () =>
    expectRefused(
      { 'sw.yaml': 'swagger: "2.0"\ninfo: { title: x, version: "1" }\npaths: {}\n' },
      'sw.yaml',
      'sw.yaml is Swagger 2.0; mockapi imports OpenAPI 3.0 and 3.1 only. Convert it first, e.g. `npx swagger2openapi sw.yaml -o openapi.yaml`, then import openapi.yaml',
    ));

  test('a broken $ref names the file and the JSON pointer', () =>
    expectRefused(
      {
        'main.yaml':
          "openapi: 3.1.0\ninfo: { title: x, version: '1' }\npaths:\n  /a:\n    get:\n      responses:\n        '200':\n          description: ok\n          content:\n            application/json:\n              schema: { $ref: './schemas.yaml#/Missing' }\n",
        'schemas.yaml': 'Pet: { type: object }\n',
      },
      'main.yaml',
      'broken $ref: schemas.yaml has nothing at #/Missing',
    ));

  test('a broken local $ref in a one-file description names the file and the JSON pointer', () =>
    expectRefused(
      {
        'one.yaml':
          "openapi: 3.0.3\ninfo: { title: x, version: '1' }\npaths:\n  /a:\n    get:\n      responses:\n        '200':\n          description: ok\n          content:\n            application/json:\n              schema: { $ref: '#/components/schemas/Missing' }\n",
      },
      'one.yaml',
      'broken $ref: one.yaml has nothing at #/components/schemas/Missing',
    ));

  test('a $ref to a file that does not exist', () =>
    expectRefused(
      { 'main.yaml': "openapi: 3.0.3\ninfo: { title: x, version: '1' }\npaths:\n  /a: { $ref: './nope.yaml#/a' }\n" },
      'main.yaml',
      'broken $ref: cannot read nope.yaml: no such file',
    ));

  test('an unreadable (missing) description', () =>
    expectRefused({}, 'missing.yaml', 'cannot read missing.yaml: no such file'));

  test('not YAML', () =>
    expectRefused(
      { 'bad.yaml': 'openapi: [\n' },
      'bad.yaml',
      'bad.yaml is not valid YAML or JSON: unexpected end of the stream within a flow collection (2:1)',
    ));

  test('OpenAPI 2.x/4.x versions are refused', () =>
    expectRefused(
      { 'v4.json': '{"openapi":"4.0.0","info":{"title":"x","version":"1"},"paths":{}}' },
      'v4.json',
      'v4.json is OpenAPI 4.0.0; mockapi imports OpenAPI 3.0 and 3.1 only',
    ));
});

test('a multi-file description in a copied folder imports the same (relative $refs)', async () => {
  const dir = join(temp.path, 'bf');
  await cp(join(OPENAPI_FIXTURES, 'blockfrost'), dir, { recursive: true });
  const res = await runImport('openapi.yaml', 'out.yaml', [], dir);
  expect(res.code).toBe(0);
  expect(res.stderr).toContain('openapi.yaml: 129 operations read');
});
