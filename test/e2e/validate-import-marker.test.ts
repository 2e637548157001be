// The endpoint's `openapi:` field is the import's marker and validation's operation reference at
// once: an endpoint imported from another description (its `openapiSpec:` names another file) is
// not checked against `openapi.spec`, and an endpoint whose path differs from the description's
// (another base path) reads the path parameters from its own segments in their order, also where a
// parameter shares its segment with text (`/:name.json`).
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { runCli, startServe, useTempDir, type ServeProcess } from '../helpers/cli.js';

const KEY = 'mk_validateMarker00000000000000001';
const temp = useTempDir('mockapi-validate-marker-');

const FILES_SPEC = `openapi: 3.0.3
info: { title: files, version: '1' }
paths:
  /v1/files/{name}.json/{version}:
    get:
      parameters:
        - { name: name, in: path, required: true, schema: { type: string, pattern: '^[a-z]+$' } }
        - { name: version, in: path, required: true, schema: { type: integer } }
      responses: { '200': { description: ok } }
`;

const OTHER_SPEC = `openapi: 3.0.3
info: { title: other, version: '1' }
paths:
  /things:
    post:
      requestBody: { required: true, content: { application/json: { schema: { type: object, required: [a] } } } }
      responses: { '200': { description: ok } }
`;

const CONFIG = `apiKey: ${KEY}
openapi:
  spec: ./files.yaml
  validate: { requests: enforce }
endpoints:
  - method: GET
    path: /files/:name.json/:version
    openapi: GET /v1/files/{name}.json/{version}
    openapiSpec: ./files.yaml
    response: { body: { ok: true } }
  - method: POST
    path: /things
    openapi: POST /things
    openapiSpec: ./other.yaml
    response: { body: { ok: true } }
`;

async function setup(name: string, config: string): Promise<string> {
  const dir = join(temp.path, name);
  await mkdir(dir, { recursive: true });
  await writeFile(join(dir, 'files.yaml'), FILES_SPEC);
  await writeFile(join(dir, 'other.yaml'), OTHER_SPEC);
  await writeFile(join(dir, 'mockapi.yaml'), config);
  return join(dir, 'mockapi.yaml');
}

describe('imported endpoints and openapi.spec', () => {
  let server: ServeProcess;
  beforeAll(async () => {
    server = await startServe(['-c', await setup('serve', CONFIG), '--no-state', '--log', 'off']);
  });
  afterAll(() => server.stop());

  test("path parameters are read from the endpoint's own segments in order, a parameter beside text included", async () => {
    const good = await fetch(`${server.mock}/files/report.json/3`, { headers: { 'x-api-key': KEY } });
    expect(good.status).toBe(200);
    expect(await good.json()).toEqual({ ok: true });
    const bad = await fetch(`${server.mock}/files/report.json/three`, { headers: { 'x-api-key': KEY } });
    expect(bad.status).toBe(422);
    const problem = (await bad.json()) as { violations: Array<{ in: string; param: string; keyword: string }> };
    expect(problem.violations.map((v) => [v.in, v.param, v.keyword])).toEqual([['path', 'version', 'type']]);
  });

  test('an endpoint imported from another description is served and not checked against openapi.spec', async () => {
    const res = await fetch(`${server.mock}/things`, {
      method: 'POST',
      headers: { 'x-api-key': KEY, 'content-type': 'application/json' },
      body: '{}',
    });
    expect(res.status).toBe(200);
    expect(res.headers.get('x-mockapi-violations')).toBeNull();
    expect(await res.json()).toEqual({ ok: true });
  });
});

test('mockapi validate accepts an endpoint whose operation is in the description its openapiSpec names', async () => {
  const res = await runCli(['validate', '-c', await setup('check', CONFIG)]);
  expect(res.stderr).toBe('');
  expect(res.code).toBe(0);
});
