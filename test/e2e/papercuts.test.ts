// Two papercuts a newcomer met: a reset that left the early-retry list behind (so the stop summary
// said "19 early of 3 Retry-After given" for requests the reset had let through), and rotate-key's
// own health polls printed as request-log lines of the user's server.
import { afterAll, describe, expect, test } from 'vitest';
import { readFile } from 'node:fs/promises';
import { runCli, startServe, stopAll, tempDir, waitFor, writeConfig } from '../helpers/cli.js';

const KEY = 'mk_papercut000000000000000000000001';
afterAll(stopAll);

const json = { 'content-type': 'application/json' };

describe('POST /__mockapi/reset forgets the Retry-Afters it made moot', () => {
  test(
    'after a reset of usage and the rate window, a client coming back is not early, and the summary counts only what followed',
    { timeout: 30_000 },
    async () => {
      const dir = await tempDir('mockapi-papercut-');
      const config = await writeConfig(
        dir,
        `apiKey: ${KEY}\nlimits:\n  rateLimit: { requests: 1, window: 1m }\nendpoints:\n  - { method: GET, path: /x }\n`,
      );
      const proc = await startServe(['-c', config, '--no-state', '--no-watch', '--log', 'off']);
      const call = async () => {
        const res = await fetch(`${proc.mock}/x`, { headers: { 'x-api-key': KEY } });
        await res.arrayBuffer();
        return res.status;
      };
      expect(await call()).toBe(200);
      expect(await call()).toBe(429); // Retry-After: up to 60 s
      expect(await call()).toBe(429); // early
      const before = (await (await fetch(`${proc.url}/__mockapi/clients`)).json()) as { earlyRetries: number }[];
      expect(before).toHaveLength(1);
      expect(before[0]!.earlyRetries).toBe(1);

      const reset = await fetch(`${proc.url}/__mockapi/reset`, { method: 'POST', headers: json, body: '{}' });
      expect(reset.status).toBe(200);
      expect(await (await fetch(`${proc.url}/__mockapi/clients`)).json()).toEqual([]);
      for (let i = 0; i < 5; i++) expect(await call()).toBe(i === 0 ? 200 : 429); // the first is admitted again; the rest are given Retry-After anew
      const after = (await (await fetch(`${proc.url}/__mockapi/clients`)).json()) as {
        requests: number;
        retryAfterGiven: number;
        earlyRetries: number;
      }[];
      expect(after).toHaveLength(1);
      expect(after[0]).toMatchObject({ requests: 4, retryAfterGiven: 4, earlyRetries: 3 });
      expect(await proc.stop()).toBe(0);
      expect(proc.stderr()).toMatch(/: 3 early of 4 Retry-After given/);
    },
  );

  test('a reset of the journal alone keeps the list', { timeout: 30_000 }, async () => {
    const dir = await tempDir('mockapi-papercut-');
    const config = await writeConfig(
      dir,
      `apiKey: ${KEY}\nlimits:\n  rateLimit: { requests: 1, window: 1m }\nendpoints:\n  - { method: GET, path: /x }\n`,
    );
    const proc = await startServe(['-c', config, '--no-state', '--no-watch', '--log', 'off']);
    for (const status of [200, 429]) {
      const res = await fetch(`${proc.mock}/x`, { headers: { 'x-api-key': KEY } });
      await res.arrayBuffer();
      expect(res.status).toBe(status);
    }
    const body = JSON.stringify({
      journal: true,
      usage: false,
      rateLimit: false,
      sequences: false,
      scenarios: false,
      clock: false,
      stubs: false,
    });
    expect((await fetch(`${proc.url}/__mockapi/reset`, { method: 'POST', headers: json, body })).status).toBe(200);
    expect(await (await fetch(`${proc.url}/__mockapi/clients`)).json()).toHaveLength(1);
    await proc.stop();
  });
});

describe("rotate-key's health polls are not request-log lines", () => {
  test(
    "the server logs the user's requests, health included, but not the polls rotate-key makes",
    { timeout: 30_000 },
    async () => {
      const dir = await tempDir('mockapi-papercut-');
      const config = await writeConfig(dir, `apiKey: ${KEY}\nendpoints:\n  - { method: GET, path: /x }\n`);
      const proc = await startServe(['-c', config, '--no-state', '--log', 'json']);
      await (await fetch(`${proc.url}/__mockapi/health`)).arrayBuffer(); // the user's own health check: logged
      const rotated = await runCli(['rotate-key', '-c', config]);
      expect(rotated.code).toBe(0);
      const key = rotated.stdout.trim();
      expect(await readFile(config, 'utf8')).toContain(key);
      await (await fetch(`${proc.mock}/x`, { headers: { 'x-api-key': key } })).arrayBuffer();
      const lines = () =>
        proc
          .stdout()
          .split('\n')
          .filter((l) => l.startsWith('{'))
          .map((l) => JSON.parse(l) as { path: string; status: number });
      await waitFor(() => lines().find((l) => l.path === '/mock/x'));
      expect(lines().map((l) => `${l.path} ${l.status}`)).toEqual(['/__mockapi/health 200', '/mock/x 200']);
      await proc.stop();
    },
  );
});
