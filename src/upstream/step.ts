import type { ConfigHolder } from '../answer/config-runtime.js';
import type { UpstreamConfig } from '../config/types.js';
import type { Exchange } from '../http/exchange.js';
import { MAX_RECORDED_BODY, type RecordingSink } from '../record/exchange.js';
import { decodePath } from '../record/decode-path.js';
import { createRedactor, type Redactor } from '../redact/redactor.js';
import { resolveAuthValue } from '../config/auth-value.js';
import { FRAMING_HEADERS, HOP_BY_HOP_HEADERS } from '../hop-by-hop.js';
import { credentialPlaces, withoutCookies, withoutQueryKeys } from './mock-credential.js';
import { decodeBody } from './decode-body.js';
import { createUpstreamClient, type UpstreamClient, type UpstreamReply } from './client.js';
import { ownField, setField } from '../control/client-fields.js';

/** What the proxy step answers: the status, header list (name, value, …) and body to send. */
export interface UpstreamAnswer {
  status: number;
  headers: string[];
  body: Buffer | string;
  note: string;
  /** One of mockapi's own answers (no upstream answer to pass on), which `errors:` may reshape. */
  kind?: 'upstreamUnreachable' | 'upstreamTimeout';
  /** An event stream, passed on as it arrives (the upstream's secret scrubbed line by line) in place of `body`. */
  stream?: AsyncIterable<Buffer>;
}

/**
 * The "upstream" step of a request: after match, a request no endpoint answers (or every request,
 * while recording with `--mode all`) goes to the real API. The client's credential for the mock is
 * removed and `upstream.auth` set in its place; the upstream's secret is scrubbed from what comes back.
 */
export interface UpstreamStep {
  /** Whether this request goes upstream; `matched` says whether an endpoint would answer it. */
  takes(x: Exchange, matched: boolean): boolean;
  /** Sends it upstream; never rejects. */
  /** `target`: the request's path and query after `/mock`, as sent. */
  forward(x: Exchange, target: string, body: Buffer | undefined): Promise<UpstreamAnswer>;
  close(): Promise<void>;
}

export interface UpstreamStepOptions {
  holder: ConfigHolder;
  /** `serve --upstream <url>`: over the config's `upstream.url`, and turns fall-through on. */
  url?: string;
  env?: Readonly<Record<string, string | undefined>>;
  recording?: RecordingSink;
}

/** Request headers never sent upstream: hop-by-hop ones, the Host, and the mock's credentials. */
const DROPPED_REQUEST = new Set([
  ...HOP_BY_HOP_HEADERS,
  'host',
  'content-length',
  'x-api-key',
  'authorization',
  'proxy-authorization',
  'expect',
]);
/** Response headers not passed back: hop-by-hop ones, and those the mock writes itself (length, CORS). */
const DROPPED_RESPONSE = new Set(FRAMING_HEADERS);
/** Never kept by a recording, whatever `captureRequestHeaders` says. */
const CREDENTIAL_HEADERS = new Set(['x-api-key', 'authorization', 'proxy-authorization', 'cookie']);
const JSON_TYPE = 'application/json; charset=utf-8';
/** The proxy's own 502 or 504: `{"error":…,"message":…}`, reshaped by `errors:` (upstreamUnreachable, upstreamTimeout) when it says so. */
function own(status: 502 | 504, message: string, note = message): UpstreamAnswer {
  const error = status === 504 ? 'upstream_timeout' : 'upstream_unreachable';
  return {
    status,
    headers: ['content-type', JSON_TYPE],
    body: JSON.stringify({ error, message }),
    note,
    kind: status === 504 ? 'upstreamTimeout' : 'upstreamUnreachable',
  };
}

/**
 * An event stream passed on as it arrives: whole lines at a time, so the upstream's secret is
 * scrubbed even when split across chunks; `done` gets every byte received once it ends.
 */
/** A compressed stream cannot be scrubbed line by line: passed as it is. */
const NO_SECRETS = { secrets: [] as string[], redactor: createRedactor([]) };

async function* passOn(
  stream: AsyncIterable<Buffer>,
  up: { secrets: string[]; redactor: Redactor },
  done: (all: Buffer | undefined) => Promise<void>,
): AsyncIterable<Buffer> {
  // Kept for the recording up to its bound only: an endless stream is passed on, never held whole.
  let all: Buffer[] | undefined = [];
  let kept = 0;
  let carry = Buffer.alloc(0);
  const clean = (bytes: Buffer) =>
    up.secrets.length === 0 ? bytes : Buffer.from(up.redactor.scrub(bytes.toString('latin1')), 'latin1');
  for await (const chunk of stream) {
    kept += chunk.length;
    if (all !== undefined) all = kept > MAX_RECORDED_BODY ? undefined : (all.push(chunk), all);
    const joined = Buffer.concat([carry, chunk]);
    const end = joined.lastIndexOf(10) + 1; // after the last newline
    carry = joined.subarray(end);
    if (end > 0) yield clean(joined.subarray(0, end));
  }
  if (carry.length > 0) yield clean(carry);
  await done(all === undefined ? undefined : Buffer.concat(all));
}

interface Resolved {
  config: UpstreamConfig;
  client: UpstreamClient;
  auth?: { header: string; value: string };
  missing: string[];
  redactor: Redactor;
  secrets: string[];
}

/** Builds the upstream step over the served config; its client is rebuilt when a reload changes `upstream`. */
export function createUpstreamStep(options: UpstreamStepOptions): UpstreamStep {
  const env = options.env ?? process.env;
  let resolved: Resolved | undefined;
  let resolvedFor: string | undefined;

  function current(): Resolved | undefined {
    const fromFile = options.holder.current.config.upstream;
    const config: UpstreamConfig | undefined =
      options.url !== undefined
        ? {
            ...(fromFile ?? { headers: {}, timeoutMs: 30_000 }),
            url: options.url.replace(/\/+$/, ''),
            fallthrough: true,
          }
        : fromFile;
    if (config === undefined) return undefined;
    const id = JSON.stringify(config);
    if (id === resolvedFor && resolved !== undefined) return resolved;
    void resolved?.client.close();
    const auth = config.auth === undefined ? undefined : resolveAuthValue(config.auth.value, env);
    const secrets = auth?.secrets ?? [];
    resolved = {
      config,
      client: createUpstreamClient(config, env),
      auth: auth === undefined ? undefined : { header: (config.auth as { header: string }).header, value: auth.value },
      missing: auth?.missing ?? [],
      redactor: createRedactor(secrets),
      secrets,
    };
    resolvedFor = id;
    return resolved;
  }

  /**
   * Tells the recording of an answer (its whole body), when one is on and wants it; an answer over
   * {@link MAX_RECORDED_BODY} once decoded (or one that does not decode) is counted, not kept.
   */
  async function record(
    x: Exchange,
    target: string,
    body: Buffer | undefined,
    reply: UpstreamReply,
    all: Buffer | undefined,
    encoding: string | undefined,
  ): Promise<string | undefined> {
    const rec = options.recording;
    const q = target.indexOf('?');
    const path = decodePath(q === -1 ? target : target.slice(0, q));
    if (rec === undefined || !rec.active || !rec.wants(x.method, path, reply.status)) return undefined;
    const decoded = all === undefined ? undefined : await decodeBody(all, encoding);
    if (decoded === undefined) {
      rec.notKept();
      return `not recorded: the answer is over ${MAX_RECORDED_BODY / 1024 / 1024} MiB once decoded, or does not decode`;
    }
    rec.capture({
      method: x.method,
      path,
      query: Object.fromEntries(new URLSearchParams(q === -1 ? '' : target.slice(q + 1))),
      requestHeaders: Object.fromEntries(
        Object.entries(x.req.headers)
          .filter(([k]) => !CREDENTIAL_HEADERS.has(k))
          .map(([k, v]) => [k, Array.isArray(v) ? v.join(', ') : String(v ?? '')]),
      ),
      requestBody: body,
      status: reply.status,
      responseHeaders: reply.headers.map(([k, v]) => [k.toLowerCase(), v]),
      responseBody: decoded,
    });
    return undefined;
  }

  return {
    takes(x, matched) {
      const rec = options.recording;
      const recordingAll = rec !== undefined && rec.active && rec.all;
      if (matched && !recordingAll) return false;
      const fromFile = x.compiled.config.upstream;
      if (options.url !== undefined) return true;
      if (fromFile === undefined) return false;
      return fromFile.fallthrough || (rec !== undefined && rec.active);
    },

    async forward(x, target, body) {
      const up = current();
      if (up === undefined) return own(502, 'no upstream is configured', 'no upstream');
      if (up.missing.length > 0)
        return own(
          502,
          `upstream.auth reads ${up.missing.join(', ')}, which ${up.missing.length === 1 ? 'is' : 'are'} not set in the environment`,
          'upstream auth not set',
        );
      const headers: Record<string, string | string[]> = {};
      const raw = x.req.rawHeaders;
      const connectionNamed = new Set(
        String(x.req.headers.connection ?? '')
          .toLowerCase()
          .split(',')
          .map((s) => s.trim()),
      );
      for (let i = 0; i < raw.length; i += 2) {
        const name = (raw[i] as string).toLowerCase();
        if (DROPPED_REQUEST.has(name) || connectionNamed.has(name)) continue;
        const prev = ownField(headers, name);
        const value = raw[i + 1] as string;
        setField(headers, name, prev === undefined ? value : Array.isArray(prev) ? [...prev, value] : [prev, value]);
      }
      // The mock's key is not the upstream's: the headers, query parameters and cookies `auth.accept` reads it from are not sent either.
      const places = credentialPlaces(x.compiled.accept);
      for (const name of places.headers) delete headers[name];
      target = withoutQueryKeys(target, places.queries);
      if (places.cookies.size > 0 && headers.cookie !== undefined) {
        const kept = (Array.isArray(headers.cookie) ? headers.cookie : [headers.cookie]).flatMap(
          (v) => withoutCookies(v, places.cookies) ?? [],
        );
        if (kept.length === 0) delete headers.cookie;
        else headers.cookie = kept.length === 1 ? (kept[0] as string) : kept;
      }
      for (const [name, value] of Object.entries(up.config.headers)) headers[name.toLowerCase()] = value;
      if (up.auth !== undefined) headers[up.auth.header.toLowerCase()] = up.auth.value;

      const abort = new AbortController();
      const onClose = () => abort.abort();
      x.res.once('close', onClose);
      const result = await up.client.send(x.method, target, headers, body, abort.signal);
      // An event stream stays tied to the client: a client that goes away ends the upstream request too.
      if (!result.ok || result.reply.stream === undefined) x.res.removeListener('close', onClose);
      if (!result.ok) return own(result.status, result.message);

      const { reply } = result;
      const out: string[] = [];
      let encoding: string | undefined;
      for (const [name, value] of reply.headers) {
        const lower = name.toLowerCase();
        if (lower === 'content-length' && x.method === 'HEAD') {
          out.push(name, value); // a HEAD answer's length is the GET's, with no body
          continue;
        }
        if (DROPPED_RESPONSE.has(lower) || lower.startsWith('access-control-')) continue;
        if (lower === 'content-encoding') encoding = value;
        // The upstream's key never reaches the client: a header echoing it loses the key.
        out.push(name, up.secrets.length === 0 ? value : up.redactor.scrub(value));
      }
      if (reply.stream !== undefined)
        return {
          status: reply.status,
          headers: out,
          body: '',
          note: `upstream ${reply.status} (event stream)`,
          stream: passOn(reply.stream, encoding === undefined ? up : NO_SECRETS, (all) =>
            record(x, target, body, reply, all, encoding).then(() => undefined),
          ),
        };
      let sent: Buffer = reply.body;
      if (up.secrets.length > 0 && (encoding === undefined || encoding === 'identity')) {
        // Every form of the key: as is, escaped (`\u0075…`, `%75…`) or base64 — not only the raw bytes.
        const text = sent.toString('latin1');
        const clean = up.redactor.scrub(text);
        if (clean !== text) sent = Buffer.from(clean, 'latin1');
      }
      if (x.method !== 'HEAD') out.push('content-length', String(sent.length));
      // Awaited (the decoding runs off the loop): one client's answers are recorded in the order it got them.
      const notKept = await record(x, target, body, reply, reply.body, encoding);
      return {
        status: reply.status,
        headers: out,
        body: sent,
        note: notKept === undefined ? `upstream ${reply.status}` : `upstream ${reply.status}; ${notKept}`,
      };
    },

    async close() {
      await resolved?.client.close();
    },
  };
}
