// Black-box tests of hot reload and key rotation (SPEC §5.5): the built CLI (`bin/mockapi.js` →
// dist/) serving with watching on, edited the ways editors and tools do, over real HTTP.
import { beforeEach, describe, expect, test } from 'vitest';
import { request } from 'undici';
import { createHash } from 'node:crypto';
import { mkdir, readFile, rename, unlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { runCli, startServe, waitFor, writeConfig, type ServeProcess, useTempDir } from '../helpers/cli.js';

const KEY = 'mk_reloadE2e0123456789abcdefghijklmn';
const INVALID_KEY = '{"error":"Unauthorized","message":"Invalid API key"}';
const QUOTA_EXCEEDED = '{"error":"Monthly request quota exceeded","code":"QUOTA_EXCEEDED"}';

const sha256 = (data: Buffer | string): string => createHash('sha256').update(data).digest('hex');

const BASE = `# reload e2e — comments must survive rotation
project: reload-e2e
apiKey: ${KEY}
endpoints:
  - method: GET
    path: /ping
    response:
      body: { pong: true }
`;

const WITH_NEW = `${BASE}  - method: GET
    path: /new
    response:
      status: 201
      body: { fresh: true }
`;

interface Answer {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  text: string;
}

async function get(base: string, path: string, key: string = KEY): Promise<Answer> {
  const res = await request(`${base}${path}`, { headers: { 'x-api-key': key } });
  return { status: res.statusCode, headers: res.headers, text: await res.body.text() };
}

async function health(base: string): Promise<{ status: string; revision: string; endpoints: number }> {
  const res = await request(`${base}/__mockapi/health`);
  return (await res.body.json()) as { status: string; revision: string; endpoints: number };
}

/** Waits until the server serves exactly these bytes (health needs no key and counts nothing). */
async function waitForRevision(server: ServeProcess, bytes: Buffer | string): Promise<void> {
  const wanted = sha256(bytes);
  await waitFor(async () => (await health(server.url)).revision === wanted, 10_000);
}

/** The lines the server wrote to stderr about reloads. */
function reloadLines(server: ServeProcess): string[] {
  return server
    .stderr()
    .split('\n')
    .filter((l) => l.startsWith('mockapi reloaded '));
}

const temp = useTempDir('mockapi-reload-e2e-', { each: true });
let file: string;

beforeEach(async () => {
  file = await writeConfig(temp.path, BASE);
});

describe('hot reload (SPEC §5.5)', () => {
  test('an in-place edit adding an endpoint: served without restart, new revision, one reload line saying what changed', async () => {
    const server = await startServe(['-c', file, '--no-state', '--log', 'off'], { cwd: temp.path });
    expect(await health(server.url)).toEqual({ status: 'ok', revision: sha256(BASE), endpoints: 1 });
    expect((await get(server.url, '/mock/new')).status).toBe(404);

    await writeFile(file, WITH_NEW);
    await server.waitForOutput(/^mockapi reloaded /m);
    expect(await health(server.url)).toEqual({ status: 'ok', revision: sha256(WITH_NEW), endpoints: 2 });
    const added = await get(server.url, '/mock/new');
    expect(added.status).toBe(201);
    expect(added.text).toBe('{"fresh":true}');
    expect((await get(server.url, '/mock/ping')).status).toBe(200);

    // A second change shows that the first one gave exactly one line (a late duplicate would be seen here).
    const changed = WITH_NEW.replace('{ fresh: true }', '{ fresh: false }');
    await writeFile(file, changed);
    await server.waitForOutput(/reloaded[^\n]*~1/);
    await waitForRevision(server, changed);
    expect(reloadLines(server)).toEqual([
      'mockapi reloaded mockapi.yaml: +1 endpoint (GET /new)',
      'mockapi reloaded mockapi.yaml: ~1 endpoint changed (GET /new)',
    ]);
    expect(server.stderr()).not.toMatch(/warning|error/);
    expect(server.child.exitCode).toBe(null);
    expect(await server.stop()).toBe(0);
  });

  test('an editor-style save (temp file renamed over) is picked up', async () => {
    const server = await startServe(['-c', file, '--no-state', '--log', 'off'], { cwd: temp.path });
    const tmp = join(temp.path, '.mockapi.yaml.swp-save');
    await writeFile(tmp, WITH_NEW);
    await rename(tmp, file);
    await waitForRevision(server, WITH_NEW);
    expect((await get(server.url, '/mock/new')).status).toBe(201);
    await server.waitForOutput(/^mockapi reloaded /m);
    expect(reloadLines(server)).toEqual(['mockapi reloaded mockapi.yaml: +1 endpoint (GET /new)']);

    // And again: the watch follows the name, not the first file's inode.
    const again = WITH_NEW.replace('/new', '/newer');
    await writeFile(tmp, again);
    await rename(tmp, file);
    await waitForRevision(server, again);
    expect((await get(server.url, '/mock/newer')).status).toBe(201);
    expect((await get(server.url, '/mock/new')).status).toBe(404);
    expect(await server.stop()).toBe(0);
  });

  test('delete then re-create: the last good config keeps serving while the file is gone, the new one is picked up', async () => {
    const server = await startServe(['-c', file, '--no-state', '--log', 'off'], { cwd: temp.path });
    await unlink(file);
    await server.waitForOutput(/still serving the last good one/);
    const kept = await get(server.url, '/mock/ping');
    expect(kept.status).toBe(200);
    expect(kept.text).toBe('{"pong":true}');
    expect((await health(server.url)).revision).toBe(sha256(BASE));

    await writeFile(file, WITH_NEW);
    await waitForRevision(server, WITH_NEW);
    expect((await get(server.url, '/mock/new')).status).toBe(201);
    expect((await get(server.url, '/mock/ping')).status).toBe(200);
    expect(server.child.exitCode).toBe(null);
    expect(await server.stop()).toBe(0);
  });

  test('an invalid edit is reported with the message `mockapi validate` prints; the old config keeps serving; the fix is picked up', async () => {
    const server = await startServe(['-c', file, '--no-state', '--log', 'off'], { cwd: temp.path });
    const broken = BASE.replace('    response:', '    failRate: 2\n    response:');
    await writeFile(file, broken);
    await server.waitForOutput(/still serving the last good one/);

    const validate = await runCli(['validate', '-c', file], { cwd: temp.path });
    expect(validate.code).toBe(1);
    expect(validate.stdout).toBe('');
    const issues = validate.stderr.trim().split('\n');
    expect(issues).toEqual([`${file}:7:15: endpoints[0].failRate must be between 0 and 1, got 2`]);
    await server.waitForOutput(/got 2\n/);
    const stderrLines = server.stderr().split('\n');
    const at = stderrLines.indexOf('mockapi warning: config not reloaded, still serving the last good one:');
    expect(at).toBeGreaterThanOrEqual(0);
    expect(stderrLines[at + 1]).toBe(issues[0]);

    expect((await get(server.url, '/mock/ping')).status).toBe(200);
    expect((await health(server.url)).revision).toBe(sha256(BASE));

    await writeFile(file, WITH_NEW);
    await waitForRevision(server, WITH_NEW);
    expect((await get(server.url, '/mock/new')).status).toBe(201);
    expect(reloadLines(server)).toEqual(['mockapi reloaded mockapi.yaml: +1 endpoint (GET /new)']);
    expect(await server.stop()).toBe(0);
  });

  test('rate-limit and quota counters survive a reload', async () => {
    const limited = BASE.replace(
      'endpoints:',
      'limits:\n  rateLimit:\n    requests: 5\n    window: 1m\n  monthlyQuota: 4\nendpoints:',
    );
    await writeFile(file, limited);
    const server = await startServe(['-c', file, '--no-state', '--log', 'off'], { cwd: temp.path });
    for (let remaining = 4; remaining >= 2; remaining--) {
      const a = await get(server.url, '/mock/ping');
      expect(a.status).toBe(200);
      expect(a.headers['ratelimit-remaining']).toBe(String(remaining));
    }

    const edited = limited.replace('{ pong: true }', '{ pong: "again" }');
    await writeFile(file, edited);
    await waitForRevision(server, edited);
    const fourth = await get(server.url, '/mock/ping');
    expect(fourth.status).toBe(200);
    expect(fourth.text).toBe('{"pong":"again"}');
    expect(fourth.headers['ratelimit-limit']).toBe('5');
    expect(fourth.headers['ratelimit-remaining']).toBe('1');
    // The rate limit has a slot left, so this 429 is the quota's: 4 were counted across the reload.
    const fifth = await get(server.url, '/mock/ping');
    expect(fifth.status).toBe(429);
    expect(fifth.text).toBe(QUOTA_EXCEEDED);
    expect(fifth.headers['ratelimit-remaining']).toBe('1');
    expect(await server.stop()).toBe(0);
  });

  test('a bodyFile edit is picked up: the body changes, the revision does not', async () => {
    await mkdir(join(temp.path, 'fixtures'));
    const body = join(temp.path, 'fixtures', 'user.json');
    await writeFile(body, '{"name":"Ada"}\n');
    const withFile = `${BASE}  - method: GET
    path: /user
    response:
      bodyFile: fixtures/user.json
`;
    await writeFile(file, withFile);
    const server = await startServe(['-c', file, '--no-state', '--log', 'off'], { cwd: temp.path });
    const before = await get(server.url, '/mock/user');
    expect(before.status).toBe(200);
    expect(before.text).toBe('{"name":"Ada"}\n');
    expect(before.headers['content-type']).toMatch(/^application\/json/);

    await writeFile(body, '{"name":"Grace"}\n');
    await waitFor(async () => (await get(server.url, '/mock/user')).text === '{"name":"Grace"}\n', 10_000);
    expect((await health(server.url)).revision).toBe(sha256(withFile));
    expect(await server.stop()).toBe(0);
  });
});

describe('rotate-key against running servers (SPEC §5.5)', () => {
  test('five rotations in a row: each prints only the key, the previous key is refused at once and the new one admitted', async () => {
    const server = await startServe(['-c', file, '--no-state', '--log', 'off'], { cwd: temp.path });
    let previous = KEY;
    const seen = new Set<string>([KEY]);
    for (let round = 1; round <= 5; round++) {
      const result = await runCli(['rotate-key', '-c', file], { cwd: temp.path });
      expect(result.code).toBe(0);
      expect(result.stdout).toMatch(/^mk_[0-9A-Za-z]{32}\n$/);
      const key = result.stdout.slice(0, -1);
      expect(seen.has(key)).toBe(false);
      seen.add(key);
      expect(result.stderr).toBe(`rotated apiKey in ${file}; 1 running server confirmed\n`);

      const old = await get(server.url, '/mock/ping', previous);
      expect(old.status).toBe(401);
      expect(old.text).toBe(INVALID_KEY);
      const fresh = await get(server.url, '/mock/ping', key);
      expect(fresh.status).toBe(200);
      expect(fresh.text).toBe('{"pong":true}');
      // Only the key changed in the file, comments and all.
      expect(await readFile(file, 'utf8')).toBe(BASE.replace(KEY, key));
      previous = key;
    }
    expect(reloadLines(server)).toEqual(
      Array.from({ length: 5 }, () => 'mockapi reloaded mockapi.yaml: no endpoint changes; apiKey changed'),
    );
    expect(server.stderr()).not.toContain('mk_');
    expect(await server.stop()).toBe(0);
  });

  test('a --no-watch server is named in a warning, rotate-key still exits 0, and that server keeps the old key', async () => {
    const server = await startServe(['-c', file, '--no-state', '--log', 'off', '--no-watch'], { cwd: temp.path });
    const result = await runCli(['rotate-key', '-c', file], { cwd: temp.path });
    expect(result.code).toBe(0);
    expect(result.stdout).toMatch(/^mk_[0-9A-Za-z]{32}\n$/);
    const key = result.stdout.slice(0, -1);
    expect(result.stderr.split('\n')).toEqual([
      `rotated apiKey in ${file}; 0 of 1 running server confirmed`,
      `warning: server ${server.url} (pid ${server.child.pid}) runs with --no-watch and accepts the old key until it is restarted`,
      '',
    ]);
    expect(await readFile(file, 'utf8')).toBe(BASE.replace(KEY, key));
    expect((await get(server.url, '/mock/ping', KEY)).status).toBe(200);
    expect((await get(server.url, '/mock/ping', key)).status).toBe(401);
    expect((await health(server.url)).revision).toBe(sha256(BASE));
    expect(await server.stop()).toBe(0);
  });
});
