// A run-time stub's bodyFile comes from a request, so it may only name a file inside the config's
// folder (symbolic links resolved): anything else is the stub's 400 invalid_stub, and no answer
// ever carries a file from outside that folder.
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { mkdir, symlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { startServe, useTempDir, writeConfig, type ServeProcess } from '../helpers/cli.js';
import { admin, mock } from '../helpers/control.js';

const KEY = 'mk_stubsBodyFile000000000000000001';
const SECRET = 'outside-secret-4e1f';
const dir = useTempDir('mockapi-stub-bodyfile-');
let serve: ServeProcess;
let conf: string;
const auth = { 'x-api-key': KEY };
const addStub = (path: string, response: unknown) =>
  admin(serve.url, 'POST', 'stubs', { endpoint: { method: 'GET', path, response } });

beforeAll(async () => {
  // <tmp>/secret.txt beside <tmp>/conf/ (the config's folder).
  conf = join(dir.path, 'conf');
  await mkdir(join(conf, 'fixtures'), { recursive: true });
  await writeFile(join(dir.path, 'secret.txt'), SECRET);
  await writeFile(join(conf, 'fixtures', 'ok.json'), '{"ok":true}');
  await symlink(join(dir.path, 'secret.txt'), join(conf, 'out-link.txt'));
  await symlink(dir.path, join(conf, 'out-dir'));
  await symlink(join(conf, 'fixtures', 'ok.json'), join(conf, 'in-link.json'));
  const file = await writeConfig(conf, `apiKey: ${KEY}\nendpoints: []\n`);
  serve = await startServe(['-c', file, '--no-state']);
});
afterAll(() => serve?.stop());

describe("a stub's bodyFile", () => {
  test.each([
    ['an absolute path outside the folder', '/etc/passwd', 'is outside the config'],
    ['an absolute path to a file beside the folder', () => join(dir.path, 'secret.txt'), 'is outside the config'],
    ['.. climbing out', '../secret.txt', 'is outside the config'],
    ['.. climbing far out', '../../../../../../../../etc/passwd', 'is outside the config'],
    ['a symbolic link to a file outside', 'out-link.txt', 'leads out of the config'],
    ['a path through a linked folder outside', 'out-dir/secret.txt', 'leads out of the config'],
  ])('%s is 400 invalid_stub at /endpoint/response/bodyFile', async (_what, given, why) => {
    const bodyFile = typeof given === 'function' ? given() : given;
    const added = await addStub('/x', { bodyFile });
    expect(added.status).toBe(400);
    expect(added.body).toEqual({
      error: 'invalid_stub',
      issues: [
        {
          path: '/endpoint/response/bodyFile',
          message: expect.stringContaining(`endpoint.response.bodyFile ${JSON.stringify(bodyFile)} ${why}`),
        },
      ],
    });
    expect(added.body.issues[0].message).toContain(`a stub's bodyFile must be a file inside it`);
    expect(JSON.stringify(added.body)).not.toContain(SECRET);
    expect((await admin(serve.url, 'GET', 'stubs')).body).toEqual({ stubs: [] });
    const answer = await mock(serve.url, 'GET', '/mock/x', { headers: auth });
    expect(answer.status).toBe(404);
    expect(answer.text).not.toContain(SECRET);
    expect(answer.text).not.toContain('root:');
  });

  test('a nested answer is checked too (its own pointer)', async () => {
    const added = await addStub('/nested', undefined);
    expect(added.status).toBe(201); // a stub without a response answers 200, empty
    await admin(serve.url, 'DELETE', `stubs/${added.body.id}`);
    const bad = await admin(serve.url, 'POST', 'stubs', {
      endpoint: {
        method: 'GET',
        path: '/nested',
        responses: [{ bodyFile: 'fixtures/ok.json' }, { bodyFile: '../secret.txt' }],
      },
    });
    expect(bad.status).toBe(400);
    expect(bad.body.issues).toEqual([
      { path: '/endpoint/responses/1/bodyFile', message: expect.stringContaining('is outside the config') },
    ]);
  });

  test.each([
    ['relative to the folder', 'fixtures/ok.json'],
    ['with .. that stays inside', 'fixtures/../fixtures/ok.json'],
    ['absolute, inside the folder', () => join(conf, 'fixtures', 'ok.json')],
    ['a symbolic link to a file inside', 'in-link.json'],
  ])('%s is read', async (_what, given) => {
    const bodyFile = typeof given === 'function' ? given() : given;
    const added = await addStub('/ok', { bodyFile });
    expect(added.status).toBe(201);
    expect(await mock(serve.url, 'GET', '/mock/ok', { headers: auth })).toMatchObject({
      status: 200,
      text: '{"ok":true}',
    });
    await admin(serve.url, 'DELETE', `stubs/${added.body.id}`);
  });

  test('a missing file inside the folder still says it does not exist', async () => {
    const added = await addStub('/x', { bodyFile: 'fixtures/none.json' });
    expect(added.status).toBe(400);
    expect(added.body.issues).toEqual([
      { path: '/endpoint/response/bodyFile', message: expect.stringContaining('does not exist') },
    ]);
  });
});
