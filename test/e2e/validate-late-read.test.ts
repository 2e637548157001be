// `serve` with `openapi.spec` starts without reading the description (only its file is looked at);
// the first request that needs it reads it. What is wrong with it then is logged as a failed
// reload's issues, at their positions, and the requests it concerns are answered without
// validation, with a journal note, until the description or the config is fixed. `mockapi
// validate` stays strict.
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { expect, test } from 'vitest';
import { runCli, startServe, useTempDir, waitFor } from '../helpers/cli.js';

const KEY = 'mk_validateLate00000000000000000001';
const temp = useTempDir('mockapi-validate-late-');

const GOOD = `openapi: 3.0.3
info: { title: t, version: '1' }
paths:
  /items:
    post:
      requestBody:
        required: true
        content:
          application/json:
            schema: { $ref: '#/components/schemas/Item' }
      responses: { '201': { description: made } }
components:
  schemas:
    Item:
      type: object
      required: [name]
      properties: { name: { type: string } }
`;
/** The same description with a `$ref` to a schema it does not have. */
const BROKEN = GOOD.replace("$ref: '#/components/schemas/Item'", "$ref: '#/components/schemas/Nope'");

async function project(name: string, description: string, endpoints: string): Promise<{ dir: string; config: string }> {
  const dir = join(temp.path, name);
  await mkdir(dir, { recursive: true });
  await writeFile(join(dir, 'openapi.yaml'), description);
  const config = join(dir, 'mockapi.yaml');
  await writeFile(config, `apiKey: ${KEY}\nopenapi:\n  spec: ./openapi.yaml\nendpoints:\n${endpoints}`);
  return { dir, config };
}

const ITEMS = '  - method: POST\n    path: /items\n    response: { status: 201, body: { id: 1 } }\n';
const post = (base: string, body: unknown) =>
  fetch(`${base}/items`, {
    method: 'POST',
    headers: { 'x-api-key': KEY, 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });

async function lastEntry(url: string): Promise<{ notes: string[]; violations?: unknown[] }> {
  const res = await fetch(`${url}/__mockapi/requests?limit=1`, { headers: { 'x-api-key': KEY } });
  const { requests } = (await res.json()) as { requests: Array<{ notes: string[]; violations?: unknown[] }> };
  return requests[0]!;
}

test('a broken $ref: serve starts, says where once a request had it read, answers without validation with a note, and validates once it is fixed', async () => {
  const { dir, config } = await project('broken-ref', BROKEN, ITEMS);
  // mockapi validate reads the whole description: an error, exit 1.
  const checked = await runCli(['validate', '-c', config]);
  expect(checked.code).toBe(1);
  expect(checked.stderr).toBe(
    `${config}:3:9: openapi.spec broken $ref: ${join(dir, 'openapi.yaml')} has nothing at #/components/schemas/Nope\n`,
  );
  const server = await startServe(['-c', config, '--no-state', '--log', 'off']);
  try {
    expect(server.stderr()).toBe('');
    const res = await post(server.mock, { name: 42 });
    expect([res.status, res.headers.get('x-mockapi-violations')]).toEqual([201, null]);
    await server.waitForOutput(/cannot be used as configured/, 'stderr');
    expect(server.stderr()).toContain(
      `the OpenAPI description cannot be used as configured; the requests concerned are answered without validation until it is fixed:\n${config}:3:9: openapi.spec broken $ref: ${join(dir, 'openapi.yaml')} has nothing at #/components/schemas/Nope\n`,
    );
    const entry = await lastEntry(server.url);
    expect(entry.violations).toBeUndefined();
    expect(entry.notes).toEqual([
      `not validated: the OpenAPI description cannot be read: broken $ref: ${join(dir, 'openapi.yaml')} has nothing at #/components/schemas/Nope`,
    ]);
    // Fixed: the watched description is read again, and requests are validated.
    await writeFile(join(dir, 'openapi.yaml'), GOOD);
    const header = await waitFor(
      async () => (await post(server.mock, { name: 42 })).headers.get('x-mockapi-violations') ?? undefined,
    );
    expect(header).toBe('1');
  } finally {
    await server.stop();
  }
});

test('an endpoint naming an operation the description lacks: logged at its line, that endpoint not validated (with a note), the others validated', async () => {
  const endpoints = `${ITEMS}  - method: GET\n    path: /gone\n    openapi: GET /gone\n    response: { body: { ok: true } }\n`;
  const { config } = await project('unknown-operation', GOOD, endpoints);
  expect((await runCli(['validate', '-c', config])).stderr).toBe(
    `${config}:10:14: endpoints[1].openapi the description ./openapi.yaml has no operation GET /gone\n`,
  );
  const server = await startServe(['-c', config, '--no-state', '--log', 'off']);
  try {
    const gone = await fetch(`${server.mock}/gone`, { headers: { 'x-api-key': KEY } });
    expect(gone.status).toBe(200);
    await server.waitForOutput(/cannot be used as configured/, 'stderr');
    expect(server.stderr()).toContain(
      `:\n${config}:10:14: endpoints[1].openapi the description ./openapi.yaml has no operation GET /gone\n`,
    );
    expect((await lastEntry(server.url)).notes).toEqual([
      'not validated: the OpenAPI description has no operation GET /gone',
    ]);
    const res = await post(server.mock, { name: 42 });
    expect([res.status, res.headers.get('x-mockapi-violations')]).toEqual([201, '1']);
  } finally {
    await server.stop();
  }
});

test('a description no request needed is never read: a server started and stopped says nothing about it', async () => {
  const { config } = await project('never-read', BROKEN, ITEMS);
  const server = await startServe(['-c', config, '--no-state', '--log', 'off']);
  const health = await fetch(`${server.url}/__mockapi/health`);
  expect(health.status).toBe(200);
  expect(await server.stop()).toBe(0);
  expect(server.stderr()).not.toContain('OpenAPI description');
});

test('a description file that is not there is still a config error at start, with its position', async () => {
  const dir = join(temp.path, 'missing');
  await mkdir(dir, { recursive: true });
  const config = join(dir, 'mockapi.yaml');
  await writeFile(config, `apiKey: ${KEY}\nopenapi:\n  spec: ./nope.yaml\n`);
  const res = await runCli(['serve', '-c', config, '--port', '0', '--no-state']);
  expect(res.code).toBe(1);
  expect(res.stderr).toContain(`${config}:3:9: openapi.spec cannot read ${join(dir, 'nope.yaml')}: no such file\n`);
});

test('a good description: no warning, and the first request is validated', async () => {
  const { config } = await project('good', GOOD, ITEMS);
  const server = await startServe(['-c', config, '--no-state', '--log', 'off']);
  try {
    const res = await post(server.mock, {});
    expect([res.status, res.headers.get('x-mockapi-violations')]).toEqual([201, '1']);
    expect((await lastEntry(server.url)).violations).toEqual([
      { in: 'body', pointer: '/name', param: 'name', keyword: 'required', message: 'body field name is required' },
    ]);
  } finally {
    expect(await server.stop()).toBe(0);
  }
  expect(server.stderr()).not.toContain('cannot be used');
});
