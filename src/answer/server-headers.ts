import type { RequestContext } from '../expression/context.js';
import type { ExpressionOptions } from '../expression/compile.js';
import { compileString, type CompiledString } from '../expression/string-template.js';
import { textOf } from '../expression/values.js';

/**
 * `server.headers`: headers every answer to a mock request carries (a request id, an API version),
 * values with `${…}` expressions made once per request. Compiled once per config load; a config
 * without it compiles to nothing, and its answers stay the precomputed bytes.
 */

const NOT_HEADER_TEXT = /[^\t\x20-\x7e\x80-\xff]/g;

/** `server.headers` compiled. */
export interface ServerHeaders {
  /** The names, lower case, in order: an answer that sets one of them itself keeps its own value. */
  readonly names: readonly string[];
  /** The names as written, comma-separated: exposed to scripts of other origins through CORS. */
  readonly expose: string;
  /** The whole flat `[name, value, …]` list when no value has an expression (made once); else undefined. */
  readonly fixed: readonly string[] | undefined;
  /** Whether a value calls `fake.*` (faker must be loaded before a request is answered). */
  readonly usesFaker: boolean;
  /** The flat list for one request (only when {@link fixed} is undefined). */
  render(ctx: RequestContext): string[];
}

/** Compiles `server.headers` (already validated); undefined when the config has none. */
export function compileServerHeaders(
  headers: Readonly<Record<string, string>> | undefined,
  options: ExpressionOptions,
): ServerHeaders | undefined {
  const entries = Object.entries(headers ?? {});
  if (entries.length === 0) return undefined;
  const compiled: Array<[string, CompiledString]> = [];
  let usesFaker = false;
  for (const [name, value] of entries) {
    const result = compileString(value, options);
    if (!result.ok) throw new Error(`server.headers.${name}: ${result.issue.message}`); // the rules reported it first
    usesFaker ||= result.value.usesFaker;
    compiled.push([name.toLowerCase(), result.value]);
  }
  const constant = compiled.every(([, value]) => value.kind === 'constant');
  return {
    names: compiled.map(([name]) => name),
    expose: entries.map(([name]) => name).join(', '),
    fixed: constant ? compiled.flatMap(([name, value]) => [name, value.text ?? '']) : undefined,
    usesFaker,
    render(ctx) {
      const list: string[] = [];
      // What a request sent may hold characters no header can carry (`%0A` in the query): dropped, as in answers' headers.
      for (const [name, value] of compiled) list.push(name, textOf(value.evaluate(ctx)).replace(NOT_HEADER_TEXT, ''));
      return list;
    },
  };
}

/**
 * `headers` (an answer's whole list: its own, then limit, CORS and server headers) without the later
 * repeats of `names`: an answer's own header of a name `server.headers` also sets is the one sent.
 * The same list when nothing repeats (the usual answer).
 */
export function answerFirst(headers: readonly string[], names: readonly string[]): readonly string[] {
  let drop: Set<number> | undefined;
  for (const name of names) {
    let found = false;
    for (let i = 0; i < headers.length; i += 2) {
      const candidate = headers[i] as string;
      if (candidate.length !== name.length || (candidate !== name && candidate.toLowerCase() !== name)) continue;
      if (found) (drop ??= new Set()).add(i);
      found = true;
    }
  }
  if (drop === undefined) return headers;
  const kept: string[] = [];
  for (let i = 0; i < headers.length; i += 2)
    if (!drop.has(i)) kept.push(headers[i] as string, headers[i + 1] as string);
  return kept;
}

/**
 * The CORS headers of an answer (`extra`) with `server.headers` exposed to scripts of other origins
 * too: `Access-Control-Expose-Headers` names them after the limit headers.
 */
export function exposing(extra: readonly string[], names: string): string[] {
  const out = extra.slice();
  for (let i = 0; i + 1 < out.length; i += 2) {
    if (out[i] === 'access-control-expose-headers') out[i + 1] = `${out[i + 1]}, ${names}`;
  }
  return out;
}
