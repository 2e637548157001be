import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import type { UpstreamConfig } from '../config/types.js';
import { tls } from '../lazy-builtins.js';

/** What the upstream answered: status, header pairs as received, the body's bytes as sent (still encoded). */
export interface UpstreamReply {
  status: number;
  headers: Array<[string, string]>;
  body: Buffer;
  /** An event stream (`text/event-stream`): its chunks as they arrive, in place of `body`. */
  stream?: AsyncIterable<Buffer>;
}

/** An upstream call's verdict: the reply, or why there is none (502 unreachable, certificate errors included; 504 timeout). */
export type UpstreamResult =
  | { ok: true; reply: UpstreamReply }
  | { ok: false; status: 502 | 504; error: 'upstream_unreachable' | 'upstream_timeout'; message: string };

/** Sends requests to one upstream; `close` lets go of its connections. */
export interface UpstreamClient {
  send(
    method: string,
    pathAndQuery: string,
    headers: Record<string, string | string[]>,
    body: Buffer | undefined,
    signal: AbortSignal,
  ): Promise<UpstreamResult>;
  close(): Promise<void>;
}

interface Dispatcher {
  request(options: object): Promise<{
    statusCode: number;
    headers: Record<string, string | string[] | undefined>;
    body: AsyncIterable<Buffer> & { dump(): Promise<void> };
  }>;
  close(): Promise<void>;
}
interface Undici {
  EnvHttpProxyAgent: new (options: object) => Dispatcher;
}

let undici: Undici | undefined;
/**
 * undici, loaded on the first upstream use: a server without `upstream` never loads it. Through
 * createRequire, since the CLI bundle runs where a dynamic import() of a package has no loader
 * (scripts/bundle.mjs keeps the package external).
 */
function loadUndici(): Undici {
  undici ??= createRequire(import.meta.url)('undici') as Undici;
  return undici;
}

/** Certificate authorities for an upstream with its own `ca`: the system's, NODE_EXTRA_CA_CERTS' and the file's. */
function certificateAuthorities(
  config: UpstreamConfig,
  env: Readonly<Record<string, string | undefined>>,
): string[] | undefined {
  if (config.ca === undefined) return undefined; // node's defaults: the system's, plus NODE_EXTRA_CA_CERTS
  const extra = env.NODE_EXTRA_CA_CERTS;
  const list = [...tls().rootCertificates];
  if (extra !== undefined && extra !== '') {
    try {
      list.push(readFileSync(extra, 'utf8'));
    } catch {
      // node itself only warns about an unreadable NODE_EXTRA_CA_CERTS
    }
  }
  list.push(readFileSync(config.ca, 'utf8'));
  return list;
}

const TIMEOUT_CODES = new Set(['UND_ERR_HEADERS_TIMEOUT', 'UND_ERR_BODY_TIMEOUT', 'UND_ERR_CONNECT_TIMEOUT']);

/** The innermost cause's code and message of a network error. */
function describeError(err: unknown): { code: string; message: string } {
  let e = err as { code?: string; message?: string; cause?: unknown } | undefined;
  while (e?.cause !== undefined && typeof e.cause === 'object' && e.cause !== null) e = e.cause as typeof e;
  return { code: e?.code ?? 'ERROR', message: e?.message ?? String(err) };
}

/**
 * A client of `config`'s upstream over undici: keep-alive connections, HTTP(S)_PROXY and NO_PROXY
 * honoured, certificates always checked (an untrusted one is a 502, never ignored), `timeout` for
 * the answer's head and between body chunks.
 */
export function createUpstreamClient(
  config: UpstreamConfig,
  env: Readonly<Record<string, string | undefined>> = process.env,
): UpstreamClient {
  const { EnvHttpProxyAgent } = loadUndici();
  const ca = certificateAuthorities(config, env);
  const tls = ca === undefined ? {} : { ca };
  // NO_PROXY read once, as the proxy variables are (undici reads it again on every request otherwise, to see whether it changed).
  const noProxy = process.env.no_proxy ?? process.env.NO_PROXY ?? '';
  const agent = new EnvHttpProxyAgent({
    connect: { ...tls, timeout: config.timeoutMs },
    requestTls: tls,
    headersTimeout: config.timeoutMs,
    bodyTimeout: config.timeoutMs,
    noProxy,
  });
  const base = new URL(config.url);
  const origin = base.origin;
  const prefix = base.pathname.replace(/\/+$/, '');

  return {
    async send(method, pathAndQuery, headers, body, signal) {
      try {
        const answer = await agent.request({ origin, path: prefix + pathAndQuery, method, headers, body, signal });
        const pairs: Array<[string, string]> = [];
        for (const [name, value] of Object.entries(answer.headers)) {
          if (value === undefined) continue;
          for (const v of Array.isArray(value) ? value : [value]) pairs.push([name, v]);
        }
        const type = String(answer.headers['content-type'] ?? '').toLowerCase();
        if (type.startsWith('text/event-stream'))
          return {
            ok: true,
            reply: { status: answer.statusCode, headers: pairs, body: Buffer.alloc(0), stream: answer.body },
          };
        return {
          ok: true,
          reply: {
            status: answer.statusCode,
            headers: pairs,
            body: await readBody(answer.body, answer.headers['content-length']),
          },
        };
      } catch (err) {
        const { code, message } = describeError(err);
        if (TIMEOUT_CODES.has(code))
          return {
            ok: false,
            status: 504,
            error: 'upstream_timeout',
            message: `${config.url} did not answer within ${config.timeoutMs} ms`,
          };
        return {
          ok: false,
          status: 502,
          error: 'upstream_unreachable',
          message: `${config.url} could not be reached: ${message} (${code})`,
        };
      }
    },
    close: () => agent.close(),
  };
}

/**
 * The answer's bytes. With a Content-Length, read straight into one buffer of that size, each chunk
 * let go once copied: a 200 MiB answer costs 200 MiB, not its chunks and their concatenation
 * (twice). Without one, or when the bytes do not match it, the chunks are joined at the end.
 */
async function readBody(body: AsyncIterable<Buffer>, length: string | string[] | undefined): Promise<Buffer> {
  const announced = typeof length === 'string' && /^\d+$/.test(length) ? Number(length) : undefined;
  if (announced === undefined || announced > 2 ** 31) {
    const chunks: Buffer[] = [];
    for await (const chunk of body) chunks.push(chunk);
    return Buffer.concat(chunks);
  }
  let into = Buffer.allocUnsafe(announced);
  let at = 0;
  for await (const chunk of body) {
    if (at + chunk.length > into.length)
      into = Buffer.concat([into.subarray(0, at), chunk]); // more than announced: grown
    else chunk.copy(into, at);
    at += chunk.length;
  }
  return at === into.length ? into : into.subarray(0, at);
}
