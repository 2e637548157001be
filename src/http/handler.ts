import type { IncomingMessage, ServerResponse } from 'node:http';
import type { CompiledEndpoint } from '../answer/compile.js';
import type { ConfigHolder } from '../answer/config-runtime.js';
import type { Clock } from '../clock.js';
import type { Logger } from '../logger.js';
import { createConnectionAuth } from '../pipeline/auth.js';
import type { KeyLimits } from '../pipeline/key-limits.js';
import { createKeyedAdmit } from './keyed-admit.js';
import { checkAccepted } from '../pipeline/auth-accept.js';
import { mockPathOf, servedUnderNote } from './base-path.js';
import type { FailureSource } from '../pipeline/failure.js';
import { BODY_STORE_UNAVAILABLE, type LimitGate, type LimitVerdict, type StoreLimitGate } from '../pipeline/limits.js';
import type { RequestLogger } from './request-log.js';
import { closestEndpoint } from '../pipeline/suggest.js';
import {
  badRequestBody,
  BODY_INVALID_KEY,
  BODY_NO_KEY,
  BODY_QUOTA_EXCEEDED,
  BODY_RATE_LIMITED,
  BODY_SIMULATED_FAILURE,
  HEADERS_INVALID_KEY,
  HEADERS_NO_KEY,
  notFoundBody,
  payloadTooLargeBody,
} from '../answer/responses.js';
import { ANY_ORIGIN, corsHeaders, isPreflight, preflightHeaders } from '../answer/cors.js';
import { plainRequestPath, readRequestPath } from './request-path.js';
import { bodyValue, drainBody, hasBody, type BodyOutcome } from './request-body.js';
import type { AnswerState } from '../answer/answer-state.js';
import { answerDynamic } from './dynamic-answer.js';
import { createAnswerHeaders } from './answer-headers.js';
import { createAnswerWriter } from './answer-writer.js';
import { answerUpstream } from './upstream-answer.js';
import { validateRequest } from './validate-answer.js';
import { JOURNAL_BODY_LIMIT, type Journal } from '../control/journal.js';
import { createResilienceSource, decideResilience, type ResilienceSource } from '../pipeline/resilience.js';
import type { ClientTracker } from '../control/early-retries.js';
import type { ViolationTally } from '../validate/tally.js';
import type { StreamFaultConfig } from '../stream/model.js';
import type { Exchange } from './exchange.js';
import type { WebhookService } from '../webhooks/service.js';
import type { UpstreamStep } from '../upstream/step.js';

export type { Exchange };
export { PROBE_HEADER } from './answer-writer.js';

export interface HandlerDeps {
  holder: ConfigHolder;
  limits: LimitGate | StoreLimitGate;
  /** Read on every request: a reload that changes the seed swaps it. */
  readonly failures: FailureSource;
  requestLog: RequestLogger;
  clock: Clock;
  logger: Logger;
  /** Sequence positions, request counters and scenario states, kept across reloads. */
  answers: AnswerState;
  /** The request journal: told of every answer `send` writes. */
  journal: Journal;
  /** The admin API: every path under `/__mockapi/` but health. */
  admin?: (req: IncomingMessage, res: ServerResponse, path: string) => void;
  /** Fault and latency-shape streams, kept across reloads; one is made when not given. */
  resilience?: ResilienceSource;
  /** Retry-After given per client, for early-retry notes; one is made when not given. */
  clients?: ClientTracker;
  /** Run-time stubs (src/stubs), matched before the config's endpoints. */
  stubs?: StubMatcher;
  /** Webhooks (src/webhooks): what an answer's `send` fires once the answer is sent. */
  webhooks?: Pick<WebhookService, 'prepare' | 'fire'>;
  /** The limits of the keys of `keys:` and the endpoints' own windows; needed when a config has either. */
  keyLimits?: KeyLimits;
  /** The upstream step (src/upstream): requests no endpoint answers go to the real API when configured. */
  upstream?: UpstreamStep;
  /** Counts requests validated against the OpenAPI description (the summary at stop). */
  violations?: ViolationTally;
}

/** The "stub match" step: the endpoint of the newest stub for a request, or undefined. */
export interface StubMatcher {
  /** Uses up one of the stub's `times` (with `serve --workers`, a stub with `times` answers after a round trip to the primary). */
  take(method: string, path: string): CompiledEndpoint | undefined | Promise<CompiledEndpoint | undefined>;
  /** The same stub, nothing used up. */
  peek(method: string, path: string): CompiledEndpoint | undefined;
}

const HEALTH_PATH = '/__mockapi/health';
const ADMIN_PREFIX = '/__mockapi/';
const NO_HEADERS: readonly string[] = [];
const EMPTY_BODY = '';
const NO_KEY_ANY_ORIGIN = HEADERS_NO_KEY.concat(ANY_ORIGIN);
const INVALID_KEY_ANY_ORIGIN = HEADERS_INVALID_KEY.concat(ANY_ORIGIN);

/**
 * Builds the request handler: a request's steps (auth, rate limit, quota, match, validate, delay, fail rate, answer) in order, each returning a verdict that `send`
 * (src/http/answer-writer.ts) turns into the answer. No step throws for bad input; a bug becomes a JSON 500 and a log line.
 */
export function createRequestHandler(deps: HandlerDeps): (req: IncomingMessage, res: ServerResponse) => void {
  const { holder, limits, requestLog, clock, journal } = deps;
  const checkAuth = createConnectionAuth();

  const writer = createAnswerWriter(deps);
  const { send, respondJson, respondOwn, respondError, sendStream, guarded, failed, retryAfters } = writer;
  const { withCors, filledHeaders, answerHeaders, limitsOf } = createAnswerHeaders(clock);
  const upstreamWriters = { ...writer, limitsOf, requestLog };
  const validateWriters = { send, limitsOf, clock, violations: deps.violations };

  function finishEndpoint(x: Exchange, endpoint: CompiledEndpoint, verdict: LimitVerdict, fail: boolean): void {
    if (x.res.destroyed) return;
    if (fail) return respondError(x, 'failure', 'simulatedFailure', 500, BODY_SIMULATED_FAILURE, limitsOf(x, verdict), 'simulated failure', mockPathOf(x.compiled, x.path) ?? x.path);
    x.answer = endpoint.answerLabel;
    send(x, 'response', endpoint.status, filledHeaders(x, endpoint.headers, endpoint, verdict), endpoint.body);
  }

  function answerEndpoint(x: Exchange, endpoint: CompiledEndpoint, verdict: LimitVerdict): void {
    // Decided on arrival, so "the n-th request" is the n-th to arrive whatever the delays.
    const fail = deps.failures.shouldFail(endpoint.key, endpoint.failRate);
    const delayMs = endpoint.resilience === undefined ? endpoint.delayMs : endpoint.delayMs + decideFaultAndDelay(x, endpoint);
    if (delayMs <= 0) return finishEndpoint(x, endpoint, verdict, fail);
    const timer = setTimeout(guarded<[CompiledEndpoint, LimitVerdict, boolean]>, delayMs, x, finishEndpoint, endpoint, verdict, fail);
    x.res.once('close', () => clearTimeout(timer));
  }

  const resilience = deps.resilience ?? createResilienceSource();
  /** Resilience hook: sets the request's fault, returns the delay its latency shape drew (on arrival, like the fail rate). */
  function decideFaultAndDelay(x: Exchange, endpoint: CompiledEndpoint, leaf?: Parameters<typeof decideResilience>[4]): number {
    const decision = decideResilience(resilience, deps.failures.seed, endpoint.key, endpoint.resilience!, leaf);
    if (decision.fault !== undefined) x.fault = decision.fault;
    if (endpoint.resilience!.delayShape !== undefined) (x.notes ??= []).push(`delay: ${decision.shapedDelayMs} ms`);
    return decision.shapedDelayMs;
  }

  // Keys of `keys:` and endpoint limits (src/http/keyed-admit.ts); undefined deps.keyLimits: made here.
  const admitKeyed = createKeyedAdmit({
    limits,
    keyLimits: deps.keyLimits,
    clock,
    configEndpoint: (x, mockPath) => configEndpoint(x.compiled, x.method, mockPath),
    afterLimits: (x, mockPath, verdict) => afterLimits(x, mockPath, verdict),
    failed: (x, err) => failed(x, err),
  });

  function runMockPipeline(x: Exchange, mockPath: string): void {
    const { compiled } = x;
    const auth = compiled.accept === undefined ? checkAuth(x.req.headers, compiled.key, x.req.rawHeaders, x.req.socket) : checkAccepted(compiled.accept, { headers: x.req.headers, url: x.req.url ?? '/', rawHeaders: x.req.rawHeaders }, compiled.key);
    if (auth === 'missing') {
      if (compiled.errors !== undefined && respondOwn(x, 'auth', 'missingKey', 401, BODY_NO_KEY, NO_HEADERS, 'no API key', mockPath, false)) return;
      return send(x, 'auth', 401, withCors(x, HEADERS_NO_KEY, NO_KEY_ANY_ORIGIN), BODY_NO_KEY, 'no API key');
    }
    if (auth === 'invalid') {
      if (compiled.errors !== undefined && respondOwn(x, 'auth', 'invalidKey', 401, BODY_INVALID_KEY, NO_HEADERS, 'invalid API key', mockPath, false)) return;
      return send(x, 'auth', 401, withCors(x, HEADERS_INVALID_KEY, INVALID_KEY_ANY_ORIGIN), BODY_INVALID_KEY, 'invalid API key');
    }

    if (auth !== 'ok') x.named = auth; // a key of `keys:`: its name for `errors:` templates (`key.name`)
    retryAfters.arrive(x); // early retries
    // A key of `keys:`, or endpoint limits: counted per key (src/pipeline/key-limits.ts).
    if (auth !== 'ok' || compiled.endpointLimits) return admitKeyed(x, mockPath, auth);
    const admitted = limits.admit(compiled.config.limits, clock());
    // Only a shared store answers later; the in-process gate's verdict is used at once.
    if (admitted instanceof Promise) return void admitted.then((verdict) => afterLimits(x, mockPath, verdict)).catch((err: unknown) => failed(x, err));
    afterLimits(x, mockPath, admitted);
  }

  function afterLimits(x: Exchange, mockPath: string, verdict: LimitVerdict): void {
    const { compiled } = x;
    if (verdict.outcome === 'store_unavailable') return respondError(x, 'rate_limit', 'storeUnavailable', 503, BODY_STORE_UNAVAILABLE, limitsOf(x, verdict), 'limit store unavailable', mockPath);
    if (verdict.outcome === 'rate_limited') return respondError(x, 'rate_limit', 'rateLimited', 429, BODY_RATE_LIMITED, limitsOf(x, verdict), 'rate limited', mockPath);
    if (verdict.outcome === 'quota_exceeded') return respondError(x, 'quota', 'quotaExceeded', 429, BODY_QUOTA_EXCEEDED, limitsOf(x, verdict), 'quota exceeded', mockPath);

    // Stub match, then match: a run-time stub answers before the config's endpoints.
    const stubbed = deps.stubs?.take(x.method, mockPath);
    if (stubbed instanceof Promise) return void stubbed.then((found) => matched(x, mockPath, verdict, found ?? configEndpoint(x.compiled, x.method, mockPath))).catch((err: Error) => failed(x, err));
    matched(x, mockPath, verdict, stubbed ?? configEndpoint(compiled, x.method, mockPath));
  }

  function matched(x: Exchange, mockPath: string, verdict: LimitVerdict, endpoint: CompiledEndpoint | undefined): void {
    const { compiled } = x;
    if (deps.upstream?.takes(x, endpoint !== undefined) === true) return answerUpstream(x, mockPath, verdict, deps.upstream, upstreamWriters);
    if (endpoint === undefined) {
      const near = closestEndpoint(x.method, mockPath, compiled.endpoints);
      const note = near === undefined ? undefined : `did you mean ${near.method} ${near.path}?`;
      return respondError(x, 'match', 'notFound', 404, notFoundBody(x.method, mockPath), limitsOf(x, verdict), note, mockPath);
    }
    x.endpoint = endpoint;
    if (endpoint.validation !== undefined && validateRequest(x, endpoint.validation, mockPath, verdict, validateWriters)) return;
    if (endpoint.dynamic === undefined) return answerEndpoint(x, endpoint, verdict);
    answerDynamic({ x, endpoint, dynamic: endpoint.dynamic, verdict, mockPath }, dynamicDeps);
  }

  const dynamicDeps = {
    deps,
    guarded,
    send,
    sendStream,
    streamFault: (endpoint: CompiledEndpoint, label: string, faults: readonly StreamFaultConfig[]) => resilience.fault(deps.failures.seed, `${endpoint.key} ${label} stream`, faults as never) as unknown as StreamFaultConfig | undefined,
    respondJson,
    limitsOf,
    answerHeaders,
    decideFaultAndDelay,
    notFound: (x: Exchange, mockPath: string, verdict: LimitVerdict, note: string | undefined) => respondError(x, 'match', 'notFound', 404, notFoundBody(x.method, mockPath), limitsOf(x, verdict), note, mockPath),
    simulatedFailure: (x: Exchange, verdict: LimitVerdict) => respondError(x, 'failure', 'simulatedFailure', 500, BODY_SIMULATED_FAILURE, limitsOf(x, verdict), 'simulated failure', mockPathOf(x.compiled, x.path) ?? x.path),
  };

  function route(x: Exchange): void {
    const mockPath = mockPathOf(x.compiled, x.path);
    if (mockPath === undefined) {
      if (x.path === HEALTH_PATH && (x.method === 'GET' || x.method === 'HEAD')) {
        return respondJson(x, null, 200, x.compiled.health); // an admin call: not journaled
      }
      if (deps.admin !== undefined && x.path.startsWith(ADMIN_PREFIX) && x.path !== HEALTH_PATH) return deps.admin(x.req, x.res, x.path);
      return respondError(x, 'match', 'notFound', 404, notFoundBody(x.method, x.path), NO_HEADERS, servedUnderNote(x.compiled, x.method, x.path), x.path);
    }
    if (x.compiled.config.server.cors && isPreflight(x.req)) {
      return send(x, 'preflight', 204, preflightHeaders(x.req, x.compiled.limitStyle?.expose), EMPTY_BODY);
    }
    // Most mock traffic has no body: go straight on, without building the callback below.
    if (!hasBody(x.req)) return runMockPipeline(x, mockPath);
    const limit = x.compiled.config.server.maxBodySize;
    const target = deps.stubs?.peek(x.method, mockPath) ?? configEndpoint(x.compiled, x.method, mockPath);
    const readsBody = target?.dynamic?.readsBody === true || target?.validation !== undefined;
    // An answer that reads the body needs all of it, and so does a request sent upstream; the journal keeps its first 64 KiB.
    const whole = readsBody || deps.upstream?.takes(x, target !== undefined) === true;
    const keep = whole ? limit : journal.enabled ? JOURNAL_BODY_LIMIT : 0;
    drainBody(x.req, limit, keep, (outcome, kept, truncated) => {
      if (whole && outcome === 'ok') x.upstreamBody = kept;
      guarded(x, afterBody, mockPath, readsBody, outcome, kept, truncated);
    });
  }

  /** The rest of {@link route} once a request's body is read (in a stream event, so under {@link guarded}). */
  function afterBody(x: Exchange, mockPath: string, readsBody: boolean, outcome: BodyOutcome, kept: Buffer | undefined, truncated: boolean): void {
    const limit = x.compiled.config.server.maxBodySize;
    if (readsBody && outcome === 'ok') x.bodyBytes = kept;
    if (readsBody && outcome === 'ok' && kept !== undefined) x.body = bodyValue(kept, x.req.headers['content-type'], (note) => (x.notes ??= []).push(note));
    if (kept !== undefined && kept.length > JOURNAL_BODY_LIMIT) {
      // A copy: a view would keep the whole body alive for as long as the entry.
      x.journalBody = Buffer.from(kept.subarray(0, JOURNAL_BODY_LIMIT));
      x.bodyTruncated = true;
    } else {
      x.journalBody = kept;
      x.bodyTruncated = truncated;
    }
    if (x.res.destroyed) return;
    if (outcome === 'too_large') {
      // Answer now, but end the answer (and, with Connection: close, the connection) only once
      // the rest of the body has been read and discarded: closing under a client still sending
      // made it fail with EPIPE before it could read the 413. requestTimeout bounds the wait.
      return respondError(x, 'bad_request', 'payloadTooLarge', 413, payloadTooLargeBody(limit), NO_HEADERS, 'body too large', mockPath);
    }
    if (outcome === 'aborted') return;
    runMockPipeline(x, mockPath);
  }

  return function handleRequest(req, res) {
    const compiled = holder.current;
    const url = req.url ?? '/';
    const x: Exchange = {
      req,
      res,
      started: requestLog.enabled || journal.enabled ? performance.now() : 0,
      method: req.method ?? 'GET',
      path: url,
      compiled,
      extra: compiled.config.server.cors ? corsHeaders(req, compiled.limitStyle) : NO_HEADERS,
      answer: null,
      body: undefined,
      step: 'response',
      endpoint: undefined,
      journalBody: undefined,
      bodyTruncated: false,
      answerHeaders: NO_HEADERS,
      answerBody: undefined,
      client: undefined,
    };
    try {
      let error: string | undefined;
      const plain = plainRequestPath(url);
      if (plain !== undefined) x.path = plain;
      else ({ path: x.path, error } = readRequestPath(url));
      if (error === undefined && req.headers.host === undefined && req.httpVersion === '1.1') error = 'HTTP/1.1 request without a Host header';
      if (error !== undefined) return respondError(x, 'bad_request', 'badRequest', 400, badRequestBody(error), NO_HEADERS, 'bad request', x.path);
      route(x);
    } catch (err) {
      failed(x, err);
    }
  };

  function configEndpoint(compiled: Exchange['compiled'], method: string, mockPath: string): CompiledEndpoint | undefined {
    const index = compiled.router.match(method, mockPath);
    return index === undefined ? undefined : compiled.endpoints[index];
  }
}
