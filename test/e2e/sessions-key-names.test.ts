// A session may be named as a key is (both are `mk_…`-like text): the key still never reaches a log,
// the journal, a list or an admin answer — the session is shown as `<redacted>` there, as the key
// is shown everywhere else. Only the answer to the call that made it gives its id back (its url and
// header must work).
import { PassThrough } from 'node:stream';
import { describe, expect, test } from 'vitest';
import { startMockServer } from '../../src/mock-server.js';
import { connectMockServer } from '../../src/connect.js';
import { admin, mock } from '../helpers/control.js';
import { runCli, startServe, useTempDir, writeConfig } from '../helpers/cli.js';

const KEY = 'mk_sessionNamedKey0000000000000001';
const CI = 'ci_sessionNamedKey000000000000002';
const dir = useTempDir('mockapi-session-key-');

describe('a session named as a key', () => {
  test('is listed, answered about, dropped and logged as <redacted>, never as the key', async () => {
    const lines: string[] = [];
    const logStream = new PassThrough();
    logStream.on('data', (d: Buffer) => lines.push(String(d)));
    const say = (level: string) => (m: string) => lines.push(`${level} ${m}`);
    const server = await startMockServer({
      port: 0,
      state: false,
      log: 'json',
      logStream,
      logger: { info: say('info'), warn: say('warn'), error: say('error') },
      config: {
        apiKey: KEY,
        keys: [{ name: 'ci', key: CI }],
        endpoints: [{ method: 'GET', path: '/a', response: { status: 200, body: { ok: true } } }],
      },
    });
    try {
      const base = server.url;
      // The call that makes it gets its id back: its url and header are what the test uses.
      const made = await admin(base, 'POST', 'sessions', { id: KEY });
      expect(made.status).toBe(201);
      expect(made.body).toMatchObject({ id: KEY, headers: { 'X-Mockapi-Session': KEY } });
      expect((await server.sessions.create({ id: CI })).id).toBe(CI);
      expect((await admin(base, 'POST', 'sessions', { id: `run-${KEY}` })).status).toBe(201);

      // It works as any session: by its prefix and by its header.
      expect((await mock(made.body.url, 'GET', '/mock/a', { headers: { 'x-api-key': KEY } })).status).toBe(200);
      const named = { 'x-api-key': CI, 'x-mockapi-session': KEY };
      expect((await mock(base, 'GET', '/mock/a', { headers: named })).status).toBe(200);

      const shown: unknown[] = [];
      const list = await admin(base, 'GET', 'sessions');
      expect(list.status).toBe(200);
      expect(list.body.sessions.map((s: { id: string; requests: number }) => [s.id, s.requests])).toEqual([
        ['<redacted>', 2],
        ['<redacted>', 0],
        ['run-<redacted>', 0],
      ]);
      shown.push(list.body);
      shown.push(await server.sessions.list());
      shown.push(await connectMockServer(server.url).sessions.list());
      const one = await admin(base, 'GET', `sessions/${KEY}`);
      expect(one.body).toMatchObject({ id: '<redacted>', requests: 2 });
      shown.push(one.body);
      shown.push((await admin(base, 'GET', `sessions?session=${KEY}`)).body);
      shown.push((await admin(base, 'GET', `requests?session=${KEY}`)).body);
      // Refusals that name it.
      const again = await admin(base, 'POST', 'sessions', { id: KEY });
      expect(again.body).toEqual({
        error: 'session_exists',
        message: 'there is a session "<redacted>" already; delete it first, or leave id out for a new one',
      });
      shown.push(again.body);
      shown.push((await admin(base, 'GET', `sessions/${KEY}?session=${CI}`)).body);
      shown.push(await server.sessions.create({ id: CI }).catch((e: Error) => e.message));
      // A wait open on it ends when it is dropped, saying so in words without the key.
      const waiting = admin(base, 'GET', `requests/wait?session=${KEY}&path=/mock/none&timeout=30s`);
      await expect.poll(async () => (await admin(base, 'GET', 'sessions')).body.sessions[0].open).toBe(1);
      const dropped = await admin(base, 'DELETE', `sessions/${KEY}`);
      expect(dropped.body).toEqual({ deleted: '<redacted>' });
      shown.push(dropped.body);
      const ended = await waiting;
      expect(ended).toMatchObject({ status: 410, body: { error: 'session_dropped' } });
      expect(ended.body.message).toContain('<redacted>');
      shown.push(ended.body);
      await server.sessions.delete(CI);
      shown.push(await admin(base, 'GET', 'sessions'));

      const text = JSON.stringify(shown) + lines.join('\n');
      expect(text).not.toContain(KEY);
      expect(text).not.toContain(CI);
    } finally {
      await server.close();
    }
  });

  test('mockapi requests --session finds it by its id, and prints no key', async () => {
    const file = await writeConfig(
      dir.path,
      `apiKey: ${KEY}\nendpoints:\n  - method: GET\n    path: /a\n    response: { status: 200 }\n`,
    );
    const serve = await startServe(['-c', file, '--no-state', '--log', 'off'], { cwd: dir.path });
    try {
      expect((await admin(serve.url, 'POST', 'sessions', { id: KEY })).status).toBe(201);
      const named = { 'x-api-key': KEY, 'x-mockapi-session': KEY };
      expect((await mock(serve.url, 'GET', '/mock/a', { headers: named })).status).toBe(200);
      const shown = await runCli(['requests', '-c', file, '--session', KEY], { cwd: dir.path });
      expect(shown.stderr).toBe('');
      expect(shown.code).toBe(0);
      expect(shown.stdout).toMatch(/ GET \/mock\/a → 200 /);
      expect(shown.stdout).not.toContain(KEY);
    } finally {
      await serve.stop();
    }
  });
});
