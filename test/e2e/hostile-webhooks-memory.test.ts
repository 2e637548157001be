// The webhook delivery log's 64 MiB bound counts what it keeps: an event's data as V8 stores it
// (two bytes a character past Latin-1), and no body text written for showing it. Measured in a
// child process with --expose-gc: the heap the log holds stays near its bound.
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { describe, expect, test } from 'vitest';
import { EventSource } from '../../src/webhooks/held.js';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { ROOT, useTempDir } from '../helpers/cli.js';

const run = promisify(execFile);
const dir = useTempDir('mockapi-hostile-webhooks-memory-');

describe('what a delivery keeps is what is counted', () => {
  test('size: the data text as stored (1 or 2 bytes a character), the type, a fixed overhead; the body is not kept', () => {
    const place = { lanes: [1, 2], n: 0 } as const;
    const narrow = new EventSource('github', 'ping', 0, JSON.stringify({ t: 'x'.repeat(1000) }), place);
    const wide = new EventSource('github', 'ping', 0, JSON.stringify({ t: '€'.repeat(1000) }), place);
    expect(narrow.size).toBe(1008 + 8 + 512);
    expect(wide.size).toBe(2 * 1008 + 8 + 512);
    const body = wide.body;
    expect(wide.body).toBe(body);
    // Only the data text is held (a github event's body is its data): no written body beside it.
    expect(Object.values(wide).filter((v) => typeof v === 'string' && v.length >= body.length)).toEqual([
      wide.dataText,
    ]);
  });

  test('a log filled with deliveries of wide-character data holds about its 64 MiB, not twice that', async () => {
    const script = `
      const { startMockServer } = await import(${JSON.stringify(`${ROOT}/dist/index.js`)});
      const KEY = 'mk_whmem00000000000000000000000001';
      const server = await startMockServer({ port: 0, config: { apiKey: KEY, server: { maxBodySize: '4mb' },
        webhooks: { targets: { app: { url: 'http://127.0.0.1:9/hook', sign: { scheme: 'github', secret: 's3cret-0001' }, retry: { schedule: 'none', timeout: '1s' } } }, events: { ping: { envelope: 'github' } } },
        endpoints: [{ method: 'POST', path: '/pay', response: { body: { ok: true }, send: [{ event: 'ping', to: 'app', data: { blob: '\${body.blob}' } }] } }] } });
      const heap = () => { global.gc(); global.gc(); return process.memoryUsage().heapUsed; };
      const base = heap();
      const body = JSON.stringify({ blob: '€'.repeat(1024 * 1024) });
      for (let i = 0; i < 80; i++) await fetch(server.url + '/mock/pay', { method: 'POST', headers: { 'x-api-key': KEY, 'content-type': 'application/json' }, body });
      // Every delivery settled (the target refuses at once): what is left is what the log keeps.
      for (;;) {
        const { targets } = await (await fetch(server.url + '/__mockapi/webhooks')).json();
        if (targets.every((t) => t.pending === 0)) break;
        await new Promise((r) => setTimeout(r, 50));
      }
      console.log(Math.round((heap() - base) / 1048576));
      await server.close();
    `;
    const file = join(dir.path, 'fill-log.mjs');
    await writeFile(file, script);
    const { stdout } = await run(process.execPath, ['--expose-gc', file], {
      timeout: 90_000,
      env: { PATH: process.env.PATH ?? '' },
    });
    // 80 deliveries of 2 MiB each: the log keeps the newest 64 MiB of them. Counted as characters,
    // it kept 63 of them, 126 MiB.
    expect(Number(stdout.trim())).toBeLessThan(64 * 1.25);
  }, 120_000);
});
