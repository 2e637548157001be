// An admin call whose body passes 64 KiB and keeps coming gets its 413 at the limit, while the
// client is still sending (not after the body's end, nor a 408 after the request timeout); the
// answer ends once the client stops, as /mock's does, and the server answers the next call.
import { connect, type Socket } from 'node:net';
import { describe, expect, test } from 'vitest';
import { startServe, useTempDir, writeConfig } from '../helpers/cli.js';
import { admin } from '../helpers/control.js';

const KEY = 'mk_hostileAdmin0000000000000000001';
const dir = useTempDir('mockapi-hostile-admin-');

/** Sends a chunked body 16 KiB at a time until the answer's status line arrives (or `max` bytes went out). */
async function sendUntilAnswered(socket: Socket, max: number): Promise<{ sent: number; head: string }> {
  let got = '';
  socket.on('data', (d: Buffer) => (got += d.toString('latin1')));
  const chunk = `${(16 * 1024).toString(16)}\r\n${'x'.repeat(16 * 1024)}\r\n`;
  let sent = 0;
  while (!got.includes('\r\n\r\n') && sent < max) {
    if (!socket.write(chunk)) await new Promise((r) => socket.once('drain', r));
    sent += 16 * 1024;
    await new Promise((r) => setImmediate(r));
  }
  return { sent, head: got };
}

describe('admin bodies over 64 KiB', () => {
  for (const path of ['/__mockapi/reset', '/__mockapi/webhooks/trigger', '/__mockapi/stubs']) {
    test(`POST ${path}: 413 at the limit while the body still comes, ended once the client stops`, async () => {
      const s = await startServe([
        '--no-state',
        '--no-watch',
        '-c',
        await writeConfig(dir.path, `apiKey: ${KEY}\nendpoints: []\n`),
      ]);
      const { port } = new URL(s.url);
      const socket = connect(Number(port), '127.0.0.1');
      await new Promise((r) => socket.once('connect', r));
      socket.write(
        `POST ${path} HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n`,
      );
      // Unfixed, the answer waited for the body's end: 64 MiB sent and still nothing.
      const { sent, head } = await sendUntilAnswered(socket, 64 * 1024 * 1024);
      expect(head).toMatch(/^HTTP\/1\.1 413 /);
      expect(sent).toBeLessThan(8 * 1024 * 1024);
      const closed = new Promise<string>((r) => {
        let all = head;
        socket.on('data', (d: Buffer) => (all += d.toString('latin1')));
        socket.once('end', () => r(all));
        socket.once('close', () => r(all));
      });
      socket.end('0\r\n\r\n');
      const answer = await closed;
      expect(answer.slice(answer.indexOf('\r\n\r\n') + 4)).toMatch(/"error":"payload_too_large"/);
      expect((await admin(s.url, 'GET', 'stubs')).status).toBe(200);
    });
  }

  test('a Content-Length over the limit is refused before a byte of the body is read', async () => {
    const s = await startServe([
      '--no-state',
      '--no-watch',
      '-c',
      await writeConfig(dir.path, `apiKey: ${KEY}\nendpoints: []\n`),
    ]);
    const { port } = new URL(s.url);
    const socket = connect(Number(port), '127.0.0.1');
    let got = '';
    socket.on('data', (d: Buffer) => (got += d.toString('latin1')));
    socket.write(
      `POST /__mockapi/reset HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: 1000000000\r\n\r\n`,
    );
    await new Promise<void>((r) => {
      const check = () => (got.includes('\r\n\r\n') ? r() : socket.once('data', check));
      check();
    });
    expect(got).toMatch(/^HTTP\/1\.1 413 /);
    socket.destroy();
  });
});
