import { isUtf8 } from 'node:buffer';
import { createHash } from 'node:crypto';
import type { RecordedExchange } from './exchange.js';
import type { Scrubber } from './scrub.js';
import { streamOf } from './sse-leaf.js';

/** Bodies larger than this (bytes) go to a bodyFile. */
export const INLINE_BODY_MAX = 16 * 1024;
/** The folder beside the config that recorded body files go to. */
export const BODY_FOLDER = 'recorded';

/** Response headers never written: hop-by-hop ones, cookies, rate-limit headers, the date, and what the mock computes itself. */
const DROPPED =
  /^(connection|keep-alive|proxy-connection|te|trailer|transfer-encoding|upgrade|set-cookie|date|content-length|content-encoding|retry-after|ratelimit(-.*)?|x-ratelimit-.*|x-rate-limit-.*|age|via|server|etag|last-modified|expires|access-control-.*|vary|alt-svc|strict-transport-security|nel|report-to|cf-.*|x-amz-.*)$/;

/** A body file to write: its path relative to the config folder and its (redacted) bytes. */
export interface BodyFile {
  path: string;
  bytes: Buffer;
  binary: boolean;
  /** A text file's bytes as text, kept for the final scan so that a large body is decoded once (dropped after it). */
  text?: string;
}

/** One recorded answer as a config leaf (`status`, `headers`, `body` or `bodyFile`). */
export type Leaf = Record<string, unknown>;

/** Recorded text as config text: `${` is data, written `$${` so no expression runs. */
export function escapeTemplate(text: string): string {
  return text.replace(/\$\{/g, () => '$${');
}

function escapeDeep(value: unknown): unknown {
  if (typeof value === 'string') return escapeTemplate(value);
  if (Array.isArray(value)) return value.map(escapeDeep);
  if (value !== null && typeof value === 'object')
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, escapeDeep(v)]));
  return value;
}

/** Whether the bytes are not UTF-8 text (a NUL, or an invalid sequence); no copy is made. */
function isBinary(bytes: Buffer): boolean {
  return bytes.includes(0) || !isUtf8(bytes);
}

const EXTENSIONS: ReadonlyArray<[RegExp, string]> = [
  [/json/, 'json'],
  [/^text\/html/, 'html'],
  [/^text\/csv/, 'csv'],
  [/xml/, 'xml'],
  [/^text\//, 'txt'],
  [/^image\/png/, 'png'],
  [/^image\/jpe?g/, 'jpg'],
  [/^image\/gif/, 'gif'],
  [/^image\/webp/, 'webp'],
  [/^application\/pdf/, 'pdf'],
];

/**
 * Turns one exchange's answer into a leaf: headers kept (content-type and `keepResponseHeaders`)
 * and redacted; a JSON body written as a value when its text is exactly what the mock would send
 * (so a replay is byte-identical), else as text; a body over 16 KiB or binary in a file named by
 * its content hash; a `text/event-stream` body as a `stream:` of its events (format sse). Every
 * recorded string has `${` escaped.
 */
export function leafOf(
  ex: RecordedExchange,
  keep: readonly string[],
  scrub: Scrubber,
  files: Map<string, BodyFile>,
): Leaf {
  const leaf: Leaf = { status: ex.status };
  const headers: Record<string, string> = {};
  let contentType = '';
  for (const [name, value] of ex.responseHeaders) {
    if (name === 'content-type') contentType = value.toLowerCase();
    if (DROPPED.test(name) || (name !== 'content-type' && !keep.includes(name))) continue;
    if (Object.hasOwn(headers, name)) continue; // the first of repeated headers
    headers[name] = escapeTemplate(scrub.header(name, value));
  }
  if (Object.keys(headers).length > 0) leaf.headers = headers;
  const bytes = ex.responseBody;
  if (bytes.length === 0) return leaf;
  const binary = isBinary(bytes);
  if (!binary && /^text\/event-stream/.test(contentType)) {
    // Replayed as a stream of the same events, sent at once.
    const stream = streamOf(bytes.toString('utf8'), scrub);
    if (stream !== undefined) {
      leaf.stream = escapeDeep(stream);
      return leaf;
    }
  }
  if (binary || bytes.length > INLINE_BODY_MAX) {
    const kept = binary ? { bytes } : keptText(bytes, scrub);
    const ext = EXTENSIONS.find(([re]) => re.test(contentType))?.[1] ?? (binary ? 'bin' : 'txt');
    const path = `${BODY_FOLDER}/${createHash('sha256').update(kept.bytes).digest('hex').slice(0, 16)}.${ext}`;
    files.set(path, { path, binary, ...kept });
    leaf.bodyFile = path;
    return leaf;
  }
  const text = bytes.toString('utf8');
  if (/json/.test(contentType)) {
    try {
      const value = JSON.parse(text) as unknown;
      if (JSON.stringify(value) === text && value !== null && typeof value === 'object') {
        leaf.body = escapeDeep(scrub.json(value));
        return leaf;
      }
    } catch {
      // not JSON after all: kept as text below
    }
  }
  // Pretty-printed or spaced JSON (or JSON under another type) stays text, byte for byte but for
  // its secret-named fields: read by its tokens, whatever its layout.
  leaf.body = escapeTemplate(scrub.jsonText(text));
  return leaf;
}

/**
 * A large text body as kept: the same bytes when redaction changed nothing (no second copy), else
 * the redacted text's; and the text itself, which the final scan reads instead of decoding again.
 */
function keptText(bytes: Buffer, scrub: Scrubber): { bytes: Buffer; text: string } {
  const text = bytes.toString('utf8');
  const scrubbed = scrub.jsonText(text);
  return scrubbed === text ? { bytes, text } : { bytes: Buffer.from(scrubbed, 'utf8'), text: scrubbed };
}

/**
 * A leaf with the values equal to a path parameter (`42` in `/users/42`) written as `${params.id}`
 * (`${int(params.id)}` for a number under a field named like an id), and query values of at least
 * 3 characters as `${query.x}`; `undefined` when nothing was replaced.
 */
export function reflect(leaf: Leaf, params: Record<string, string>, query: Record<string, string>): Leaf | undefined {
  if (leaf.body === undefined || typeof leaf.body !== 'object' || leaf.body === null) return undefined;
  let changed = false;
  const byValue = new Map<string, string>();
  for (const [k, v] of Object.entries(query)) if (v.length >= 3 && !byValue.has(v)) byValue.set(v, `query.${k}`);
  for (const [k, v] of Object.entries(params)) byValue.set(v, `params.${k}`);
  function walk(value: unknown, key?: string): unknown {
    if (typeof value === 'string') {
      const source = byValue.get(value);
      if (source !== undefined && !value.includes('$')) {
        changed = true;
        return `\${${source}}`;
      }
      return value;
    }
    if (typeof value === 'number' && key !== undefined && /(^|_)id$|Id$/.test(key)) {
      const source = byValue.get(String(value));
      if (source !== undefined && source.startsWith('params.') && /^\d+$/.test(String(value))) {
        changed = true;
        return `\${int(${source})}`;
      }
      return value;
    }
    if (Array.isArray(value)) return value.map((v) => walk(v));
    if (value !== null && typeof value === 'object')
      return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, walk(v, k)]));
    return value;
  }
  const body = walk(leaf.body);
  return changed ? { ...leaf, body } : undefined;
}
