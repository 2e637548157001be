// Helpers for the `serve --workers` tests: each worker's own loopback port, and calls on fresh connections.
import { readdir, readFile } from 'node:fs/promises';
import { Agent, request } from 'node:http';
import { join } from 'node:path';

/** The URLs the workers registered (their own loopback ports), read from `<dir>/.mockapi/servers/`. */
export async function workerUrls(dir: string): Promise<string[]> {
  const folder = join(dir, '.mockapi', 'servers');
  const names = (await readdir(folder).catch(() => [])).filter((n) => n.endsWith('.json'));
  return Promise.all(
    names.map(async (n) => (JSON.parse(await readFile(join(folder, n), 'utf8')) as { url: string }).url),
  );
}

/**
 * One request on a connection of its own (no keep-alive), so on the shared port node:cluster hands
 * each call to the next worker instead of the one that answered the last. Resolves with the status
 * and the body (parsed when JSON).
 */
export function call(
  url: string,
  method: string,
  path: string,
  options: { body?: unknown; headers?: Record<string, string> } = {},
): Promise<{ status: number; body: any }> {
  const payload = options.body === undefined ? undefined : JSON.stringify(options.body);
  const headers: Record<string, string> = {
    ...(payload === undefined
      ? {}
      : { 'content-type': 'application/json', 'content-length': String(Buffer.byteLength(payload)) }),
    ...options.headers,
  };
  return new Promise((done, fail) => {
    const req = request(`${url}${path}`, { method, agent: false, headers }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res
        .on('data', (d: string) => (text += d))
        .on('end', () => {
          const json = (res.headers['content-type'] ?? '').includes('json');
          done({ status: res.statusCode ?? 0, body: json && text !== '' ? JSON.parse(text) : text });
        });
    });
    req.on('error', fail).end(payload);
  });
}

/**
 * A burst: `connections` keep-alive connections, each sending `GET url` one request after another
 * for `durationMs`. Resolves with how many answers of each status came back (0: a failed request).
 */
export async function burst(
  url: string,
  headers: Record<string, string>,
  options: { connections: number; durationMs: number; atLeast?: number },
): Promise<Map<number, number>> {
  const agent = new Agent({ keepAlive: true, maxSockets: options.connections });
  const statuses = new Map<number, number>();
  const until = performance.now() + options.durationMs;
  let sent = 0;
  // A burst lasts `durationMs`, and longer on a busy machine until `atLeast` requests were answered.
  const more = (): boolean => performance.now() < until || sent < (options.atLeast ?? 0);
  const one = (): Promise<number> =>
    new Promise((done) => {
      const req = request(url, { agent, headers }, (res) => res.resume().on('end', () => done(res.statusCode ?? 0)));
      req.on('error', () => done(0)).end();
    });
  const loop = async (): Promise<void> => {
    while (more()) {
      sent++;
      const status = await one();
      statuses.set(status, (statuses.get(status) ?? 0) + 1);
    }
  };
  await Promise.all(Array.from({ length: options.connections }, loop));
  agent.destroy();
  return statuses;
}
