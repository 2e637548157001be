// Answers are ended together at the end of the loop turn (src/http/write-batch.ts). These tests hold
// the orders that batching must not change: a journal wait answers only after the answers to the
// requests it reports were written, and a worker's own port answers a pipelined good request before
// the JSON 400 of a bad one (as the shared port does), instead of Node's bare 400 in its place.
import { connect, type Socket } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { listenOwnPort, type OwnPort } from '../../src/http/own-port.js';
import { endSoon } from '../../src/http/write-batch.js';
import { startServe, useTempDir, writeConfig, type ServeProcess } from '../helpers/cli.js';
import { parseAnswer } from '../helpers/raw-http.js';

const KEY = 'mk_write_order_test';

/** A keep-alive connection; `first()` resolves at the first byte that arrives after it is called. */
function openConnection(url: string): Promise<{ socket: Socket; first(): Promise<void> }> {
  const { hostname, port } = new URL(url);
  return new Promise((done, fail) => {
    const socket = connect(Number(port), hostname, () => {
      let arrived: (() => void) | undefined;
      socket.on('data', () => {
        arrived?.();
        arrived = undefined;
      });
      done({ socket, first: () => new Promise<void>((resolve) => (arrived = resolve)) });
    });
    socket.once('error', fail);
  });
}

describe('a journal wait and the answers it reports (SPEC §8)', () => {
  const dir = useTempDir('mockapi-write-order-');
  let server: ServeProcess;
  beforeAll(async () => {
    const config = await writeConfig(
      dir.path,
      `project: order\napiKey: ${KEY}\nendpoints:\n  - method: GET\n    path: /a\n    response:\n      body: {ok: true}\n`,
    );
    server = await startServe(['-c', config, '--no-state', '--log', 'off', '--no-watch']);
  });
  afterAll(() => server?.stop());

  it('a waiting test hears of a request only after that request was answered, in every one of 40 rounds', async () => {
    const client = await openConnection(server.url);
    try {
      const { host } = new URL(server.url);
      let since = 0;
      const send = (): void =>
        void client.socket.write(`GET /mock/a HTTP/1.1\r\nhost: ${host}\r\nx-api-key: ${KEY}\r\n\r\n`);
      for (let round = 0; round < 40; round++) {
        const order: string[] = [];
        // The wait is for two requests: the first one's round trip gives the wait time to be read,
        // so it is the second one's journal entry that answers it (with or without, the order must hold).
        const wait = fetch(`${server.url}/__mockapi/requests/wait?since=${since}&count=2&timeout=10s`).then(
          async (res) => {
            order.push('wait');
            return (await res.json()) as { requests: { id: number; status: number }[] };
          },
        );
        const first = client.first();
        send();
        await first;
        const answered = client.first().then(() => order.push('answer'));
        send();
        const [{ requests }] = await Promise.all([wait, answered]);
        expect(requests.map((r) => r.status)).toEqual([200, 200]);
        expect(order, `round ${round}`).toEqual(['answer', 'wait']);
        since = requests[1]!.id;
      }
    } finally {
      client.socket.destroy();
    }
  });
});

describe("a worker's own port (serve --workers)", () => {
  let port: OwnPort;
  beforeAll(async () => {
    port = await listenOwnPort((_req, res) => {
      res.writeHead(200, ['content-type', 'text/plain', 'content-length', '2']);
      endSoon(res, 'ok');
    });
  });
  afterAll(() => port?.close());

  it('answers a good request pipelined before a malformed one, then the JSON 400, in 20 rounds', async () => {
    const { hostname, port: number } = new URL(port.url);
    for (let round = 0; round < 20; round++) {
      const bytes = await new Promise<Buffer>((done) => {
        const socket = connect(Number(number), hostname);
        const chunks: Buffer[] = [];
        socket.on('data', (chunk: Buffer) => chunks.push(chunk));
        socket.on('close', () => done(Buffer.concat(chunks)));
        socket.on('error', () => {});
        socket.write(`GET / HTTP/1.1\r\nhost: ${hostname}\r\n\r\nNOT HTTP AT ALL\r\n\r\n`);
      });
      const text = bytes.toString('latin1');
      const second = text.indexOf('HTTP/1.1 400');
      expect(second, text).toBeGreaterThan(0);
      const good = parseAnswer(bytes.subarray(0, second));
      expect(good?.status, text).toBe(200);
      expect(good?.body.toString(), text).toBe('ok');
      const bad = parseAnswer(bytes.subarray(second));
      expect(bad?.headers['content-type'], text).toMatch(/application\/json/);
      expect(JSON.parse(bad!.body.toString()), text).toMatchObject({ error: 'bad_request' });
    }
  });
});
