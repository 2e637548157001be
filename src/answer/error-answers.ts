import type { Config, ErrorKind, ErrorTemplateConfig } from '../config/types.js';
import type { AnswerRandom, RequestContext } from '../expression/context.js';
import { compileString, type CompiledString } from '../expression/string-template.js';
import { textOf } from '../expression/values.js';
import { compileTemplate, type CompiledTemplate } from '../expression/template.js';
import { createAnswerRandom } from '../seeded.js';
import { JSON_CONTENT_TYPE } from './responses.js';
import { parseCookies as parseCookiesLoose, parseQuery as parseQueryLoose } from './request-context.js';

/**
 * `errors:` — mockapi's own answers (401, 404, 429, 500, 503, 413, 400) reshaped to look like the
 * API being mocked. Compiled once per load; a config without `errors:` compiles to nothing, so its
 * answers stay the precomputed default bytes.
 */

/** What an error template reads beside the request: `error.*` and `key.*`. */
export interface ErrorFacts {
  /** The default answer's status. */
  readonly status: number;
  /** The default answer's message (`Invalid API key`, `No endpoint configured for GET /x`…). */
  readonly message: string;
  readonly method: string;
  /** The request path after the base path (the whole path outside it). */
  readonly path: string;
  /** Seconds of the answer's Retry-After, when it has one. */
  readonly retryAfter: number | undefined;
  /** The name of the key recognised: `default` for apiKey, else its name in `keys:`. */
  readonly keyName: string | undefined;
  /** The key the request sent, masked (never the key itself). */
  readonly keyMasked: string | undefined;
  /** A meter's refusal: `{ name, window, limit, used, requested, message }` (amounts in the meter's unit); undefined otherwise. */
  readonly meter?: Readonly<Record<string, unknown>>;
  /** `error.hint`: what the client may do about it (a 401 for a key sent where the config reads none); absent otherwise. */
  readonly hint?: string | undefined;
}

/** The request as the template sees it: the handler's request, read on first use. */
export interface ErrorRequest {
  readonly url: string;
  readonly headers: Readonly<Record<string, string | string[] | undefined>>;
  readonly body: unknown;
  readonly now: number;
  readonly state: Readonly<Record<string, string>>;
}

/** A template's answer: status, its own headers (content-type and content-length included) and body. */
export interface ErrorRendering {
  readonly status: number;
  readonly headers: string[];
  readonly body: Buffer;
}

/** One compiled template. */
export interface CompiledError {
  render(facts: ErrorFacts, request: ErrorRequest, defaultHeaders: readonly string[]): ErrorRendering;
}

/** The compiled `errors:` of a config: by kind, and each endpoint's own simulatedFailure by endpoint key. */
export interface CompiledErrors {
  readonly kinds: Partial<Record<ErrorKind, CompiledError>>;
  readonly endpointFailures: ReadonlyMap<string, CompiledError>;
  readonly usesFaker: boolean;
}

class ErrorContext implements RequestContext {
  readonly params: Readonly<Record<string, string>> = {};
  readonly request = 0;
  #query: Record<string, string | string[]> | undefined;
  #cookies: Record<string, string> | undefined;
  #random: AnswerRandom | undefined;
  readonly error: Record<string, unknown>;
  readonly key: Record<string, unknown>;
  constructor(
    readonly facts: ErrorFacts,
    readonly req: ErrorRequest,
    readonly kind: string,
  ) {
    const error: Record<string, unknown> = {
      status: facts.status,
      message: facts.message,
      method: facts.method,
      path: facts.path,
    };
    if (facts.retryAfter !== undefined) error.retryAfter = facts.retryAfter;
    if (facts.meter !== undefined) error.meter = facts.meter;
    if (facts.hint !== undefined) error.hint = facts.hint;
    this.error = error;
    const key: Record<string, unknown> = {};
    if (facts.keyName !== undefined) key.name = facts.keyName;
    if (facts.keyMasked !== undefined) key.masked = facts.keyMasked;
    this.key = key;
  }
  get headers() {
    return this.req.headers;
  }
  get body() {
    return this.req.body;
  }
  get state() {
    return this.req.state;
  }
  get now() {
    return this.req.now;
  }
  get query(): Record<string, string | string[]> {
    if (this.#query === undefined) {
      const at = this.req.url.indexOf('?');
      this.#query = at === -1 ? {} : parseQueryLoose(this.req.url.slice(at + 1));
    }
    return this.#query;
  }
  get cookies(): Record<string, string> {
    const header = this.req.headers.cookie;
    return (this.#cookies ??= parseCookiesLoose(Array.isArray(header) ? header.join('; ') : header));
  }
  get random(): AnswerRandom {
    return (this.#random ??= createAnswerRandom(0, `errors.${this.kind}`, this.req.now));
  }
}

function compileOne(
  template: ErrorTemplateConfig,
  kind: string,
  options: { scenarios: readonly string[]; env: Readonly<Record<string, string | undefined>> },
): { compiled: CompiledError; usesFaker: boolean } {
  const expressionOptions = { ...options, errorSources: true };
  const headers: Array<[string, CompiledString]> = [];
  let usesFaker = false;
  for (const [name, value] of Object.entries(template.headers)) {
    const result = compileString(value, expressionOptions);
    if (!result.ok) throw new Error(`errors.${kind}.headers.${name}: ${result.issue.message}`); // validated before
    usesFaker ||= result.value.usesFaker;
    headers.push([name.toLowerCase(), result.value]);
  }
  let body: CompiledTemplate | undefined;
  if (template.hasBody) {
    const result = compileTemplate(template.body, expressionOptions);
    if (!result.ok) throw new Error(`errors.${kind}.body: ${result.issues[0]?.message ?? 'does not compile'}`);
    body = result.value;
    usesFaker ||= body.usesFaker;
  }
  const ownType = headers.some(([name]) => name === 'content-type');
  const compiled: CompiledError = {
    render(facts, request, defaultHeaders) {
      const ctx = new ErrorContext(facts, request, kind);
      const list: string[] = [];
      // The default answer's own headers (a 401's challenge) unless the template names them.
      for (let i = 0; i < defaultHeaders.length; i += 2) {
        const name = defaultHeaders[i] as string;
        if (name === 'content-type' || name === 'content-length' || headers.some(([n]) => n === name)) continue;
        list.push(name, defaultHeaders[i + 1] as string);
      }
      for (const [name, value] of headers) list.push(name, textOf(value.evaluate(ctx)));
      let bytes: Buffer;
      if (body === undefined) bytes = Buffer.alloc(0);
      else {
        const value = body.evaluate(ctx);
        bytes = Buffer.from(ownType && typeof value === 'string' ? value : (JSON.stringify(value) ?? ''), 'utf8');
      }
      if (!ownType) list.unshift('content-type', JSON_CONTENT_TYPE);
      list.push('content-length', String(bytes.length));
      return { status: template.status ?? facts.status, headers: list, body: bytes };
    },
  };
  return { compiled, usesFaker };
}

/** Compiles a config's `errors:`; undefined when it has none (the default answers, precomputed). */
export function compileErrors(
  config: Config,
  env: Readonly<Record<string, string | undefined>>,
): CompiledErrors | undefined {
  const entries = Object.entries(config.errors ?? {}) as Array<[ErrorKind, ErrorTemplateConfig]>;
  const failures = config.endpoints.filter((e) => e.simulatedFailure !== undefined);
  if (entries.length === 0 && failures.length === 0) return undefined;
  const options = { scenarios: Object.keys(config.scenarios), env };
  let usesFaker = false;
  const kinds: Partial<Record<ErrorKind, CompiledError>> = {};
  for (const [kind, template] of entries) {
    const one = compileOne(template, kind, options);
    kinds[kind] = one.compiled;
    usesFaker ||= one.usesFaker;
  }
  const endpointFailures = new Map<string, CompiledError>();
  for (const endpoint of failures) {
    const one = compileOne(endpoint.simulatedFailure as ErrorTemplateConfig, 'simulatedFailure', options);
    endpointFailures.set(`${endpoint.method} ${endpoint.path}`, one.compiled);
    usesFaker ||= one.usesFaker;
  }
  return { kinds, endpointFailures, usesFaker };
}
