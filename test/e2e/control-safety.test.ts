// SPEC §8 safety: each attack on the admin API is refused (DNS rebinding, cross-site writes, a
// missing or wrong token), admin answers carry no CORS headers, health keeps its CORS.
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { request } from 'undici';
import { runCli, startServe, stopAll, useTempDir, writeConfig, type ServeProcess } from '../helpers/cli.js';
import { startMockServer } from '../../src/mock-server.js';
import { admin } from '../helpers/control.js';
import { createAdminGuard, isLoopbackHost } from '../../src/control/admin-guard.js';
import type { IncomingMessage } from 'node:http';

const KEY = 'mk_safetyKey00000000000000000000001';
const dir = useTempDir('mockapi-safety-');
let server: ServeProcess;
let withToken: ServeProcess;
beforeAll(async () => {
  const config = await writeConfig(dir.path, `apiKey: ${KEY}\nendpoints:\n  - method: GET\n    path: /ping\n`);
  server = await startServe(['-c', config, '--no-state', '--no-watch', '--log', 'off']);
  withToken = await startServe([
    '-c',
    config,
    '--no-state',
    '--no-watch',
    '--log',
    'off',
    '--admin-token',
    'tok_s3cret',
  ]);
});
afterAll(stopAll);

describe('Host check (DNS rebinding)', () => {
  test('a page whose name was rebound to 127.0.0.1 gets 403 for reads and writes', async () => {
    for (const [method, path] of [
      ['GET', 'requests'],
      ['GET', 'usage'],
      ['POST', 'reset'],
      ['DELETE', 'requests'],
      ['GET', 'events'],
    ] as const) {
      const answer = await admin(server.url, method, path, {}, { host: 'attacker.example:4010' });
      expect(answer.status).toBe(403);
      expect(answer.body.error).toBe('forbidden');
      expect(answer.headers['content-type']).toBe('application/json; charset=utf-8');
    }
  });

  test('loopback names and addresses pass', async () => {
    for (const host of ['localhost:1', '127.0.0.1', '127.1.2.3:9', '[::1]:4010', 'app.localhost']) {
      expect((await admin(server.url, 'GET', 'usage', undefined, { host })).status, host).toBe(200);
    }
  });

  test('isLoopbackHost and the bound host rule', () => {
    expect(['localhost', '127.0.0.1', '::1', '[::1]', 'a.localhost'].map(isLoopbackHost)).toEqual([
      true,
      true,
      true,
      true,
      true,
    ]);
    expect(['0.0.0.0', '::', '192.168.1.2', 'example.com', 'localhost.example.com'].map(isLoopbackHost)).toEqual([
      false,
      false,
      false,
      false,
      false,
    ]);
    const guard = createAdminGuard({ bindHost: '192.168.1.2', token: 't' });
    const req = (host: string, token?: string) =>
      ({
        method: 'GET',
        headers: { host, ...(token ? { 'x-mockapi-admin-token': token } : {}) },
      }) as unknown as IncomingMessage;
    expect(guard(req('evil.example'))?.status).toBe(403);
    expect(guard(req('192.168.1.2:4010'))?.status).toBe(401);
    expect(guard(req('192.168.1.2:4010', 'nope'))?.status).toBe(401);
    expect(guard(req('192.168.1.2:4010', 't'))).toBeUndefined();
    // The token proves the caller is no rebinding page: a container's service name works with it.
    expect(guard(req('mock:4010', 't'))).toBeUndefined();
  });
});

describe('no CORS on admin answers; health keeps it', () => {
  test('an Origin gets no Access-Control-* from the admin API, and its preflight is not allowed', async () => {
    const answer = await admin(server.url, 'GET', 'usage', undefined, { origin: 'http://attacker.example' });
    expect(answer.status).toBe(200);
    expect(Object.keys(answer.headers).filter((h) => h.startsWith('access-control'))).toEqual([]);
    const preflight = await admin(server.url, 'OPTIONS', 'reset', undefined, {
      origin: 'http://attacker.example',
      'access-control-request-method': 'POST',
    });
    expect(preflight.status).toBe(405);
    expect(Object.keys(preflight.headers).filter((h) => h.startsWith('access-control'))).toEqual([]);
    const health = await request(`${server.url}/__mockapi/health`, { headers: { origin: 'http://app.example' } });
    expect(health.headers['access-control-allow-origin']).toBe('http://app.example');
    await health.body.dump();
  });
});

describe('writes need Content-Type: application/json (cross-site forms)', () => {
  test.each([
    ['POST', 'reset'],
    ['POST', 'rotate-key'],
    ['DELETE', 'requests'],
    ['PUT', 'scenarios/x'],
    ['POST', 'clock'],
  ])('%s %s as a form or text/plain is 415', async (method, path) => {
    for (const type of ['application/x-www-form-urlencoded', 'text/plain', 'multipart/form-data; boundary=x']) {
      const answer = await admin(server.url, method, path, 'a=1', { 'content-type': type });
      expect(answer.status).toBe(415);
      expect(answer.body.error).toBe('unsupported_media_type');
    }
    const none = await request(`${server.url}/__mockapi/${path}`, { method: method as 'POST' });
    expect(none.statusCode).toBe(415);
    await none.body.dump();
  });

  test('the form did not reset anything', async () => {
    await request(`${server.mock}/ping`, { headers: { 'x-api-key': KEY } }).then((r) => r.body.dump());
    const before = (await admin(server.url, 'GET', 'usage')).body.requests;
    await admin(server.url, 'POST', 'reset', 'usage=true', { 'content-type': 'application/x-www-form-urlencoded' });
    expect((await admin(server.url, 'GET', 'usage')).body.requests).toBe(before);
    expect(before).toBeGreaterThan(0);
  });
});

describe('admin token', () => {
  test('a server with a token refuses a missing or wrong one with 401, takes the right one', async () => {
    const missing = await admin(withToken.url, 'GET', 'usage');
    expect(missing.status).toBe(401);
    expect(missing.body).toEqual({
      error: 'unauthorized',
      message: 'this server requires the X-Mockapi-Admin-Token header (its token was printed when it started)',
    });
    expect(
      (await admin(withToken.url, 'GET', 'usage', undefined, { 'x-mockapi-admin-token': 'tok_wrong' })).status,
    ).toBe(401);
    expect(
      (await admin(withToken.url, 'GET', 'usage', undefined, { 'x-mockapi-admin-token': 'tok_s3cret' })).status,
    ).toBe(200);
    // Health stays open (SPEC §3).
    expect((await admin(withToken.url, 'GET', 'health')).status).toBe(200);
  });
});

describe('an empty admin token is refused everywhere', () => {
  test('serve --admin-token "" (or one a header cannot carry) is wrong usage: exit 2 with the reason, nothing served', async () => {
    const config = await writeConfig(
      dir.path,
      `apiKey: ${KEY}\nendpoints:\n  - method: GET\n    path: /ping\n`,
      'empty-token.yaml',
    );
    for (const [token, reason] of [
      ['', 'must not be empty.'],
      [' tok ', 'must be visible ASCII characters only (no spaces), as a header carries them unchanged.'],
    ] as const) {
      const result = await runCli(
        ['serve', '-c', config, '--no-state', '--no-watch', '--port', '0', '--admin-token', token],
        { timeoutMs: 10_000 },
      );
      expect(result.code).toBe(2);
      expect(result.stderr).toContain(`option '--admin-token <token>' argument '${token}' is invalid. ${reason}`);
      expect(result.stdout).not.toContain('listening');
    }
  });

  test('startMockServer({ adminToken: "" }) throws a clear TypeError', async () => {
    const config = await writeConfig(
      dir.path,
      `apiKey: ${KEY}\nendpoints:\n  - method: GET\n    path: /ping\n`,
      'empty-token-object.yaml',
    );
    await expect(startMockServer({ config, port: 0, adminToken: '' })).rejects.toThrow(
      new TypeError('adminToken must not be empty, got ""'),
    );
  });

  test('the guard refuses to be built with an empty token, and an empty header never matches', async () => {
    expect(() => createAdminGuard({ bindHost: '127.0.0.1', token: '' })).toThrow(
      new TypeError('the admin token must not be empty'),
    );
    const guard = createAdminGuard({ bindHost: '0.0.0.0', token: 't' });
    const req = (host: string, token: string) =>
      ({ method: 'GET', headers: { host, 'x-mockapi-admin-token': token } }) as unknown as IncomingMessage;
    expect(guard(req('evil.example', ''))?.status).toBe(403);
    expect(guard(req('127.0.0.1', ''))?.status).toBe(401);
    // Over HTTP: an empty header opens nothing, project?reveal=true included.
    for (const host of ['attacker.example', '127.0.0.1']) {
      const answer = await admin(withToken.url, 'GET', 'project?reveal=true', undefined, {
        host,
        'x-mockapi-admin-token': '',
      });
      expect(answer.status).toBe(host === '127.0.0.1' ? 401 : 403);
      expect(JSON.stringify(answer.body)).not.toContain(KEY);
    }
  });
});
