import { connect } from 'node:net';

/** What a client saw on one connection: every byte, in how many pieces, and how the connection ended. */
export interface RawExchange {
  bytes: Buffer;
  pieces: number;
  /** `end`: the server closed (FIN); `error`: the connection failed (e.g. ECONNRESET). */
  ended: 'end' | 'error';
  errorCode?: string;
  ms: number;
}

/** Sends one GET on a fresh connection (Connection: close) and records everything until the connection ends. */
export function rawGet(url: string, path: string, headers: Record<string, string> = {}): Promise<RawExchange> {
  return rawGets(url, [path], headers);
}

/**
 * Sends GETs for `paths` pipelined in one write on a fresh connection (the last with Connection:
 * close) and records everything until the connection ends.
 */
export function rawGets(
  url: string,
  paths: readonly string[],
  headers: Record<string, string> = {},
): Promise<RawExchange> {
  const { hostname, port } = new URL(url);
  return new Promise((done) => {
    const started = performance.now();
    const socket = connect(Number(port), hostname);
    const chunks: Buffer[] = [];
    let finished = false;
    const finish = (ended: RawExchange['ended'], errorCode?: string): void => {
      if (finished) return;
      finished = true;
      socket.destroy();
      done({
        bytes: Buffer.concat(chunks),
        pieces: chunks.length,
        ended,
        ms: performance.now() - started,
        ...(errorCode === undefined ? {} : { errorCode }),
      });
    };
    socket.on('data', (chunk: Buffer) => chunks.push(chunk));
    socket.on('end', () => finish('end'));
    socket.on('error', (err: NodeJS.ErrnoException) => finish('error', err.code));
    socket.on('close', () => finish('end'));
    const head = (connection: string): string =>
      Object.entries({ host: `${hostname}:${port}`, connection, ...headers })
        .map(([k, v]) => `${k}: ${v}\r\n`)
        .join('');
    socket.write(
      paths
        .map((path, i) => `GET ${path} HTTP/1.1\r\n${head(i === paths.length - 1 ? 'close' : 'keep-alive')}\r\n`)
        .join(''),
    );
  });
}

/** Splits a raw answer into its status, headers (lower-case names) and body bytes. */
export function parseAnswer(
  bytes: Buffer,
): { status: number; headers: Record<string, string>; body: Buffer } | undefined {
  const end = bytes.indexOf('\r\n\r\n');
  if (end < 0) return undefined;
  const [statusLine, ...lines] = bytes.subarray(0, end).toString('latin1').split('\r\n');
  const headers: Record<string, string> = {};
  for (const line of lines) {
    const colon = line.indexOf(':');
    headers[line.slice(0, colon).toLowerCase()] = line.slice(colon + 1).trim();
  }
  return { status: Number(statusLine!.split(' ')[1]), headers, body: bytes.subarray(end + 4) };
}
