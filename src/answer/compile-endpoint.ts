/**
 * One endpoint compiled: CompiledEndpoint, what a request reads of it, and compileEndpoint, which
 * builds it once per load (also for a run-time stub), with its prepared header list and the body
 * files it reads. src/answer/compile.ts compiles the whole config with it.
 */
import type { AnswerList, Config, EndpointConfig, HttpMethod, RateLimitConfig } from '../config/types.js';
import type { AnswerBody } from './answer-body.js';
import { compileDynamicAnswers, type DynamicAnswers } from './answer-tree.js';
import type { ExpressionOptions } from '../expression/compile.js';
import { fixedAnswer, isDynamicLeaf } from './leaf.js';
import { ANY_ORIGIN } from './cors.js';
import { rateLimitHeaders } from '../pipeline/rate-limit.js';
import type { LimitStyle } from '../pipeline/limit-headers.js';
import { endpointResilience, type EndpointResilience } from '../pipeline/resilience.js';
import type { AnswerParts, EndpointParts } from './parts.js';
import { compileCost, type CompiledCost } from './cost.js';

/** An endpoint ready to answer: everything a request needs is computed here, once per load. */
export interface CompiledEndpoint extends EndpointParts {
  /** `GET /users/:id` — identifies the endpoint for seeded failures and logs. */
  key: string;
  method: HttpMethod;
  path: string;
  failRate: number;
  delayMs: number;
  status: number;
  /** Flat `[name, value, …]` list, content-type and content-length included. */
  headers: string[];
  /**
   * The whole header list of the usual answer (a request with no Origin to echo), precomputed so a
   * request builds no array: `headers`, then RateLimit-* when a rate limit is configured, then the
   * `*` CORS headers when CORS is on. The three RateLimit-* values (see `rateSlot`) are written in
   * place by each answer just before `writeHead`, which turns the list into the response head
   * before returning; nothing else keeps the list, and nothing else writes to it.
   */
  answerHeaders: string[];
  /** Index in `answerHeaders` of the RateLimit-Limit value (Remaining's is +2, Reset's +4); -1 without a rate limit. */
  rateSlot: number;
  body: AnswerBody;
  /** What the journal calls the static answer: the response's `name`, else `"response"`. */
  answerLabel: string;
  /**
   * The answers of an endpoint that varies per request; undefined for a static endpoint,
   * which answers with the precomputed `status`, `answerHeaders` and `body` above.
   */
  dynamic?: DynamicAnswers;
  /** Faults and latency shape; undefined for an endpoint with neither, which pays nothing for them. */
  resilience?: EndpointResilience;
  /** `limits.rateLimit` of the endpoint: a window per key, on top of the key's plan. */
  rateLimit?: RateLimitConfig;
  /** `cost:` of the endpoint: what a request reserves and settles on its key's meters; undefined when none. */
  cost?: CompiledCost;
}

/** An answer's whole header list for the usual request, with where its RateLimit-* values go (see CompiledEndpoint.answerHeaders). */
export interface PreparedHeaders {
  readonly answerHeaders: string[];
  readonly rateSlot: number;
}

/**
 * `headers`, then RateLimit-* (values to fill in) when a rate limit is configured, then the `*`
 * CORS headers when CORS is on: what {@link CompiledEndpoint.answerHeaders} holds, for an endpoint's
 * answer or a fixed answer of a dynamic one. With a `limitStyle`, only its first `headers.length`
 * entries are kept: each answer writes its limit and CORS headers after them, in place (see
 * src/http/answer-headers.ts), and the list's room for them is kept from one answer to the next.
 */
export function prepareAnswerHeaders(
  headers: readonly string[],
  config: Pick<Config, 'limits' | 'server'>,
  limitStyle: LimitStyle | undefined,
): PreparedHeaders {
  const answerHeaders = headers.slice();
  let rateSlot = -1;
  // A styled config builds its limit headers per answer: the list holds none of them.
  if (config.limits.rateLimit !== undefined && limitStyle === undefined) {
    rateSlot = answerHeaders.length + 1;
    answerHeaders.push(...rateLimitHeaders({ limit: 0, remaining: 0, resetSeconds: 0 }));
  }
  if (config.server.cors) answerHeaders.push(...(limitStyle?.anyOrigin ?? ANY_ORIGIN));
  return { answerHeaders, rateSlot };
}

/**
 * Compiles one endpoint as it is served within `config` (its limits, CORS and scenarios): also
 * what a run-time stub (src/stubs) is compiled with, under a `key` of its own (its counters,
 * seeded draws and journal name are then not the config endpoint's of the same route).
 */
export async function compileEndpoint(
  endpoint: EndpointConfig,
  config: Config,
  env: ExpressionOptions['env'],
  limitStyle: LimitStyle | undefined,
  parts: AnswerParts,
  key = `${endpoint.method} ${endpoint.path}`,
): Promise<CompiledEndpoint> {
  const { response } = endpoint;
  const dynamicResponse =
    isDynamicLeaf(response) ||
    Object.keys(response.setState ?? {}).length > 0 ||
    response.send !== undefined ||
    endpoint.seedBy !== undefined;
  const dynamic = await compileDynamicAnswers(
    endpoint,
    { env, scenarios: Object.keys(config.scenarios) },
    parts,
    dynamicResponse,
    key,
  );
  // A dynamic endpoint answers through `dynamic`; its precomputed answer below is never sent.
  const { status, headers, body } =
    dynamic === undefined ? await fixedAnswer(response) : { status: 200, headers: [], body: '' };
  const { answerHeaders, rateSlot } = prepareAnswerHeaders(headers, config, limitStyle);
  const compiled: CompiledEndpoint = {
    key,
    method: endpoint.method,
    path: endpoint.path,
    failRate: endpoint.failRate,
    // A plain response's own delay adds to the endpoint's, as a leaf's does (README: decisions).
    delayMs: endpoint.delayMs + (dynamic === undefined ? (response.delayMs ?? 0) : 0),
    status,
    headers: headers as string[],
    answerHeaders: answerHeaders as string[],
    rateSlot,
    body,
    answerLabel: response.name ?? 'response',
  };
  if (dynamic !== undefined) compiled.dynamic = dynamic;
  const resilience = endpointResilience(
    endpoint,
    dynamic !== undefined,
    dynamic !== undefined && someLeafHasFaults(endpoint),
  );
  if (resilience !== undefined) compiled.resilience = resilience;
  if (endpoint.rateLimit !== undefined) compiled.rateLimit = endpoint.rateLimit;
  const cost = compileCost(endpoint, { env, scenarios: Object.keys(config.scenarios) });
  if (cost !== undefined) compiled.cost = cost;
  return compiled;
}

/** Whether any answer of the endpoint lists faults. */
function someLeafHasFaults(endpoint: EndpointConfig): boolean {
  const visit = (list: AnswerList): boolean =>
    list.items.some((item) => (item.list !== undefined ? visit(item.list) : item.leaf.faults !== undefined));
  return endpoint.answers === undefined ? endpoint.response.faults !== undefined : visit(endpoint.answers);
}

/** Every body file an endpoint's answers read. */
export function endpointBodyFiles(endpoint: EndpointConfig): string[] {
  const files: string[] = [];
  const visit = (list: AnswerList): void => {
    for (const item of list.items) {
      if (item.list !== undefined) visit(item.list);
      else if (item.leaf.bodyFile !== undefined) files.push(item.leaf.bodyFile);
    }
  };
  if (endpoint.answers !== undefined) visit(endpoint.answers);
  else if (endpoint.response.bodyFile !== undefined) files.push(endpoint.response.bodyFile);
  return files;
}
