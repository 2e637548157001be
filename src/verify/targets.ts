import { setMaxListeners } from 'node:events';
import type { UpstreamConfig } from '../config/types.js';
import { createUpstreamClient } from '../upstream/client.js';
import { decodeBody } from '../upstream/decode-body.js';
import type { ExampleRequest } from './request.js';

/** An answer, decoded: status, header pairs (lower-case names), body bytes. */
export interface Reply {
  status: number;
  headers: Array<[string, string]>;
  body: Buffer;
}

/** A reply, or why there is none (in words, without a stack). */
export type Sent = { ok: true; reply: Reply } | { ok: false; reason: string };

/** Where examples are sent: the real API, or the mock. */
export interface Target {
  send(request: ExampleRequest): Promise<Sent>;
  close(): Promise<void>;
}

/** The first value of a header, by lower-case name. */
export function headerOf(reply: Reply, name: string): string | undefined {
  return reply.headers.find(([k]) => k === name)?.[1];
}

/** The most of an event stream a run reads. */
const STREAM_MAX_BYTES = 16 * 1024 * 1024;

/** An event stream read to its end, or undefined when it does not end within `ms` (or grows past {@link STREAM_MAX_BYTES}); it is closed then. */
async function readStream(stream: AsyncIterable<Buffer>, ms: number): Promise<Buffer | undefined> {
  const chunks: Buffer[] = [];
  let size = 0;
  const iterator = stream[Symbol.asyncIterator]();
  const deadline = Date.now() + ms;
  let timer: NodeJS.Timeout | undefined;
  try {
    for (;;) {
      const left = deadline - Date.now();
      if (left <= 0) return undefined;
      const next = await Promise.race([
        iterator.next(),
        new Promise<'late'>((done) => (timer = setTimeout(() => done('late'), left))),
      ]);
      clearTimeout(timer);
      if (next === 'late') return undefined;
      if (next.done === true) return Buffer.concat(chunks);
      size += next.value.length;
      if (size > STREAM_MAX_BYTES) return undefined;
      chunks.push(next.value);
    }
  } finally {
    clearTimeout(timer);
    await iterator.return?.();
  }
}

/**
 * The real API, through the same client as `serve --upstream` and `record` (proxy variables,
 * `upstream.ca`, certificates always checked, `upstream.timeout` for the head and between body
 * chunks): the example's headers, `upstream.headers`, then the credential of `upstream.auth`
 * (`auth`, already read from the environment). Bodies are decoded (gzip, deflate, br).
 */
export function upstreamTarget(
  config: UpstreamConfig,
  auth: { header: string; value: string } | undefined,
  env: Readonly<Record<string, string | undefined>>,
): Target {
  const client = createUpstreamClient(config, env);
  // One signal for every request of the run (a request is bounded by upstream.timeout; nothing is cancelled early).
  const signal = new AbortController().signal;
  setMaxListeners(0, signal); // one listener per request in flight (--concurrency)
  return {
    async send(request) {
      const headers: Record<string, string> = { ...request.headers };
      for (const [name, value] of Object.entries(config.headers)) headers[name.toLowerCase()] = value;
      if (auth !== undefined) headers[auth.header.toLowerCase()] = auth.value;
      const result = await client.send(request.method, request.path + request.query, headers, request.body, signal);
      if (!result.ok) return { ok: false, reason: result.message };
      const { reply } = result;
      let raw = reply.body;
      if (reply.stream !== undefined) {
        const read = await readStream(reply.stream, config.timeoutMs);
        if (read === undefined)
          return {
            ok: false,
            reason: `the upstream's event stream did not end within ${config.timeoutMs} ms (or ${STREAM_MAX_BYTES / 1024 / 1024} MiB)`,
          };
        raw = read;
      }
      const pairs = reply.headers.map(([k, v]): [string, string] => [k.toLowerCase(), v]);
      const encoding = pairs.find(([k]) => k === 'content-encoding')?.[1];
      const body = await decodeBody(raw, encoding);
      if (body === undefined)
        return { ok: false, reason: `the upstream's body could not be decoded (content-encoding ${encoding})` };
      return { ok: true, reply: { status: reply.status, headers: pairs, body } };
    },
    close: () => client.close(),
  };
}
