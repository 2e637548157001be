// `Prefer: code=<status>` picks an imported answer: `mockapi import` brings every other response of an
// operation in (its examples, else a body generated from its schema), reachable by its status;
// `code=404, example=gone` combines with the example's name; an unknown code gets the default answer,
// named `default` in the journal; request validation (`enforce`) answers before any of them.
import { expect, test } from 'vitest';
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { runCli, startServe, useTempDir } from '../helpers/cli.js';
import { apiKeyOf, runImport } from '../helpers/openapi.js';

const temp = useTempDir('mockapi-prefer-code-', { each: true });

const DESCRIPTION = `openapi: 3.0.3
info: { title: codes, version: '1' }
paths:
  /items/{id}:
    get:
      summary: One item
      parameters:
        - { name: id, in: path, required: true, schema: { type: integer } }
      responses:
        '200':
          description: ok
          content:
            application/json:
              example: { id: 1, name: pen }
        '404':
          description: missing
          content:
            application/json:
              examples:
                missing: { value: { error: not_found } }
                gone: { value: { error: gone } }
        '422':
          description: invalid
          content:
            application/json:
              schema:
                type: object
                required: [error]
                properties: { error: { type: string, enum: [invalid_item] } }
        '500':
          description: no body
        default:
          description: anything else
  /plain:
    get:
      responses:
        '200':
          description: ok
          content:
            application/json:
              example: { ok: true }
        default:
          description: error
          content:
            application/json:
              example: { error: oops }
`;

async function importFixture(): Promise<{ spec: string; config: string; key: string }> {
  const spec = join(temp.path, 'codes.yaml');
  const config = join(temp.path, 'mockapi.yaml');
  await writeFile(spec, DESCRIPTION);
  const res = await runImport(spec, config);
  expect(res.code).toBe(0);
  expect(res.stderr).toContain('2 operations read, 2 written');
  return { spec, config, key: await apiKeyOf(config) };
}

test('each other response is reachable with Prefer: code=<status>, alone or with example=<name>', async () => {
  const { spec, config, key } = await importFixture();
  const text = await readFile(config, 'utf8');
  // A response of its own with one status and one example stays a plain `response:` (as before).
  expect(text).toContain('    path: /plain\n    response:\n      status: 200\n      body:\n        ok: true\n');
  expect(await runCli(['validate', '-c', config])).toMatchObject({ code: 0 });
  // Re-import changes no byte; --check is in sync.
  expect((await runImport(spec, config)).stderr).toContain('(0 new, 0 updated, 2 unchanged)');
  expect(await readFile(config, 'utf8')).toBe(text);
  expect((await runImport(spec, config, ['--check'])).code).toBe(0);

  const server = await startServe(['-c', config, '--no-state', '--log', 'off']);
  const item = async (prefer?: string) => {
    const res = await fetch(`${server.mock}/items/1`, {
      headers: { 'x-api-key': key, ...(prefer === undefined ? {} : { prefer }) },
    });
    const body = await res.text();
    return { status: res.status, body: body === '' ? '' : JSON.parse(body) };
  };
  try {
    expect(await item()).toEqual({ status: 200, body: { id: 1, name: 'pen' } });
    expect(await item('code=404')).toEqual({ status: 404, body: { error: 'not_found' } });
    expect(await item('code="404"')).toEqual({ status: 404, body: { error: 'not_found' } });
    expect(await item('code=404, example=gone')).toEqual({ status: 404, body: { error: 'gone' } });
    expect(await item('example="gone"; code=404')).toEqual({ status: 404, body: { error: 'gone' } });
    expect(await item('code=404, example=nope')).toEqual({ status: 404, body: { error: 'not_found' } });
    // No example: the body is generated from the response's schema, as the default answer's would be.
    expect(await item('respond-async, code=422')).toEqual({ status: 422, body: { error: 'invalid_item' } });
    expect(await item('code=422, example=x')).toEqual({ status: 422, body: { error: 'invalid_item' } });
    expect(await item('code=500')).toEqual({ status: 500, body: '' });
    // The whole status must match; a code the operation does not list, and an example of another
    // response named without its code, get the default answer.
    expect(await item('code=40')).toEqual({ status: 200, body: { id: 1, name: 'pen' } });
    expect(await item('code=4040')).toEqual({ status: 200, body: { id: 1, name: 'pen' } });
    expect(await item('code=418')).toEqual({ status: 200, body: { id: 1, name: 'pen' } });
    expect(await item('example=gone')).toEqual({ status: 200, body: { id: 1, name: 'pen' } });
    // `default` is no status a client can ask for.
    const plain = await fetch(`${server.mock}/plain`, { headers: { 'x-api-key': key, prefer: 'code=500' } });
    expect({ status: plain.status, body: await plain.json() }).toEqual({ status: 200, body: { ok: true } });

    const journal = await fetch(`${server.url}/__mockapi/requests?limit=14`, { headers: { 'x-api-key': key } });
    const { requests } = (await journal.json()) as {
      requests: Array<{ headers: { prefer?: string }; response: string }>;
    };
    const answered = Object.fromEntries(
      requests.filter((r) => r.headers.prefer !== undefined).map((r) => [r.headers.prefer, r.response]),
    );
    expect(answered).toMatchObject({
      'code=404': 'code=404, example=missing',
      'code=404, example=gone': 'code=404, example=gone',
      'respond-async, code=422': 'code=422',
      'code=418': 'default',
    });
  } finally {
    await server.stop();
  }
});

test('a changed response is updated in place on the next import', async () => {
  const { spec, config } = await importFixture();
  const before = await readFile(config, 'utf8');
  await writeFile(
    spec,
    DESCRIPTION.replace('gone: { value: { error: gone } }', 'gone: { value: { error: gone_for_good } }'),
  );
  const check = await runImport(spec, config, ['--check']);
  expect(check.code).toBe(0); // a changed answer is listed, not a failure
  const res = await runImport(spec, config);
  expect(res.stderr).toContain('(0 new, 1 updated, 1 unchanged)');
  const after = await readFile(config, 'utf8');
  expect(after).toBe(before.replace('error: gone\n', 'error: gone_for_good\n'));
});

test('request validation (enforce) answers before Prefer picks an answer', async () => {
  const { config, key } = await importFixture();
  const text = await readFile(config, 'utf8');
  await writeFile(
    config,
    text.replace(
      /^apiKey: .*$/m,
      (line) => `${line}\nopenapi:\n  spec: ./codes.yaml\n  validate: { requests: enforce }`,
    ),
  );
  expect(await runCli(['validate', '-c', config])).toMatchObject({ code: 0 });
  const server = await startServe(['-c', config, '--no-state', '--log', 'off']);
  try {
    const bad = await fetch(`${server.mock}/items/abc`, { headers: { 'x-api-key': key, prefer: 'code=404' } });
    expect(bad.status).toBe(422);
    expect(bad.headers.get('content-type')).toBe('application/problem+json');
    expect(((await bad.json()) as { violations: Array<{ in: string; param: string }> }).violations).toMatchObject([
      { in: 'path', param: 'id' },
    ]);
    const good = await fetch(`${server.mock}/items/7`, { headers: { 'x-api-key': key, prefer: 'code=404' } });
    expect({ status: good.status, body: await good.json() }).toEqual({ status: 404, body: { error: 'not_found' } });
  } finally {
    await server.stop();
  }
});
