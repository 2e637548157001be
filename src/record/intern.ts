import { createHash } from 'node:crypto';
import type { RecordedExchange } from './exchange.js';

/**
 * A recording keeps every exchange until it is written, and most of them repeat: the same answer's
 * bytes, the same header names and values. Each exchange keeps its own fields, but identical bodies
 * and strings are held once: memory follows the distinct answers, not the number of requests.
 */
export interface Interner {
  /** The exchange with its bodies and header strings replaced by the ones already held, when equal. */
  exchange<T extends Omit<RecordedExchange, 'seq'>>(exchange: T): T;
  /** Lets go of everything held (nothing recorded is pending any more). */
  clear(): void;
  /** How many distinct bodies are held. */
  readonly bodies: number;
}

/** An interner of recorded exchanges; a body is known by its sha1 and length, and compared byte for byte before it is shared. */
export function createInterner(): Interner {
  let bodies = new Map<string, Buffer>();
  let strings = new Map<string, string>();
  const body = (bytes: Buffer): Buffer => {
    if (bytes.length === 0) return bytes;
    const id = `${bytes.length}:${createHash('sha1').update(bytes).digest('base64')}`;
    const held = bodies.get(id);
    if (held !== undefined && held.equals(bytes)) return held;
    if (held !== undefined) return bytes; // a sha1 collision: kept as it is
    // A small buffer may be a slice of a shared 8 KiB pool, which it would keep alive: held as a copy of its own.
    const own =
      bytes.byteLength === bytes.buffer.byteLength ? bytes : Buffer.from(Uint8Array.prototype.slice.call(bytes).buffer);
    bodies.set(id, own);
    return own;
  };
  const string = (s: string): string => {
    const held = strings.get(s);
    if (held !== undefined) return held;
    strings.set(s, s);
    return s;
  };
  return {
    exchange(e) {
      const requestHeaders: Record<string, string> = {};
      for (const [name, value] of Object.entries(e.requestHeaders)) requestHeaders[string(name)] = string(value);
      return {
        ...e,
        path: string(e.path),
        requestHeaders,
        requestBody: e.requestBody === undefined ? undefined : body(e.requestBody),
        responseHeaders: e.responseHeaders.map(([name, value]) => [string(name), string(value)] as [string, string]),
        responseBody: body(e.responseBody),
      };
    },
    clear() {
      bodies = new Map();
      strings = new Map();
    },
    get bodies() {
      return bodies.size;
    },
  };
}
