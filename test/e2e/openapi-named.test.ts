// Named examples become SPEC §7 `responses` picked with `Prefer: example=<name>`. Needs the config
// loader's support for `responses`/`when` (merged from the dynamic-responses branch).
import { expect, test } from 'vitest';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { runCli, startServe, useTempDir } from '../helpers/cli.js';
import { apiKeyOf, OPENAPI_FIXTURES, runImport } from '../helpers/openapi.js';

const temp = useTempDir('mockapi-openapi-named-', { each: true });

test('each named example is reachable with Prefer: example=<name>; the first is the default', async () => {
  const config = join(temp.path, 'mockapi.yaml');
  const res = await runImport(join(OPENAPI_FIXTURES, 'named', 'openapi.yaml'), config);
  expect(res.stderr).toContain('3 operations read, 3 written');
  expect(res.code).toBe(0);
  expect((await runCli(['validate', '-c', config])).code).toBe(0);
  const again = await readFile(config);
  expect((await runImport(join(OPENAPI_FIXTURES, 'named', 'openapi.yaml'), config)).code).toBe(0);
  expect(await readFile(config)).toEqual(again);

  const key = await apiKeyOf(config);
  const server = await startServe(['-c', config, '--no-state', '--log', 'off']);
  const animal = async (prefer?: string) => {
    const res = await fetch(`${server.mock}/v2/animals/1`, {
      headers: { 'x-api-key': key, ...(prefer ? { prefer } : {}) },
    });
    return { status: res.status, body: await res.json() };
  };
  try {
    expect(await animal()).toEqual({ status: 200, body: { id: 1, name: 'Tom', kind: 'cat' } });
    expect(await animal('example=catfish')).toEqual({ status: 200, body: { id: 2, name: 'Whiskers', kind: 'fish' } });
    expect(await animal('respond-async, example="dog (old)"')).toEqual({
      status: 200,
      body: { id: 3, name: 'Rex', kind: 'dog' },
    });
    expect(await animal('example=cat')).toEqual({ status: 200, body: { id: 1, name: 'Tom', kind: 'cat' } });
    // `example=catfishy` names no example: it must not pick catfish
    expect(await animal('example=catfishy')).toEqual({ status: 200, body: { id: 1, name: 'Tom', kind: 'cat' } });
    const tree = await fetch(`${server.mock}/v2/tree`, { headers: { 'x-api-key': key } });
    expect(await tree.json()).toEqual({ id: '497f6eca-6276-4993-bfeb-53cbbbba6f08', label: 'string', children: [] });
  } finally {
    await server.stop();
  }
});
