import type { IncomingMessage, ServerResponse } from 'node:http';
import { bodyLength, type AnswerBody } from '../answer/answer-body.js';
import type { CompiledEndpoint } from '../answer/compile.js';
import type { ConfigHolder } from '../answer/config-runtime.js';
import type { Clock } from '../clock.js';
import type { Logger } from '../logger.js';
import { createConnectionAuth } from '../pipeline/auth.js';
import type { KeyLimits } from '../pipeline/key-limits.js';
import { createKeyedAdmit } from './keyed-admit.js';
import { checkAccepted } from '../pipeline/auth-accept.js';
import { errorTemplate, renderOwnAnswer, type OwnAnswer } from './error-writer.js';
import { mockPathOf, servedUnderNote } from './base-path.js';
import type { ErrorKind } from '../config/types.js';
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
  internalErrorBody,
  JSON_CONTENT_TYPE,
  notFoundBody,
  payloadTooLargeBody,
} from '../answer/responses.js';
import { ANY_ORIGIN, corsHeaders, isPreflight, preflightHeaders } from '../answer/cors.js';
import { plainRequestPath, readRequestPath } from './request-path.js';
import { bodyValue, drainBody, hasBody, type BodyOutcome } from './request-body.js';
import type { AnswerState } from '../answer/answer-state.js';
import { answerDynamic } from './dynamic-answer.js';
import { createAnswerHeaders } from './answer-headers.js';
import { JOURNAL_BODY_LIMIT, type Journal } from '../control/journal.js';
import type { Step } from '../control/journal-entry.js';
import { createResilienceSource, decideResilience, type ResilienceSource } from '../pipeline/resilience.js';
import { writeFault } from './fault-writer.js';
import { createClientTracker, type ClientTracker } from '../control/early-retries.js';
import { createRetryAfterWatch } from './retry-after-watch.js';

import { endSoon } from './write-batch.js';
import type { EndpointValidation } from '../validate/step.js';
import { withViolationsHeader } from '../validate/violations.js';
import type { ViolationTally } from '../validate/tally.js';
import { endAfterBody } from './http-limits.js';
import { startStream } from '../stream/writer.js';
import type { RenderedStream, StreamFaultPlan } from '../stream/compile.js';
import type { StreamFaultConfig } from '../stream/model.js';
import type { Exchange } from './exchange.js';
import type { WebhookService } from '../webhooks/service.js';
import type { PreparedSend } from '../webhooks/prepare.js';
import type { UpstreamStep } from '../upstream/step.js';

export type { Exchange };

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
/** Sent by mockapi's own health polls (see state/confirm-servers.ts), which the request log leaves out. */
export const PROBE_HEADER = 'x-mockapi-probe';
const ADMIN_PREFIX = '/__mockapi/';
const NO_HEADERS: readonly string[] = [];
const EMPTY_BODY = '';
const NO_KEY_ANY_ORIGIN = HEADERS_NO_KEY.concat(ANY_ORIGIN);
const INVALID_KEY_ANY_ORIGIN = HEADERS_INVALID_KEY.concat(ANY_ORIGIN);

/**
 * Builds the request handler: a request's steps (auth, rate limit, quota, match, delay, fail rate, answer) in order, each returning a verdict that `send`
 * turns into the answer. No step throws for bad input; a bug becomes a JSON 500 and a log line.
 */
export function createRequestHandler(deps: HandlerDeps): (req: IncomingMessage, res: ServerResponse) => void {
  const { holder, limits, requestLog, clock, logger, journal } = deps;
  const checkAuth = createConnectionAuth();

  /** The only writer to `res`: status, the complete header list and body, then the log line. */
  /** `step` says which step answered, for the journal; null for an answer the journal does not keep (health). */
  function send(x: Exchange, step: Step | null, status: number, headers: readonly string[], body: AnswerBody, note?: string): void {
    // One reading serves the journal and the log line; none is taken when neither was on at arrival.
    const ms = x.started === 0 ? 0 : performance.now() - x.started;
    // a Retry-After that reaches a client past auth. Remembered before it is written, as
    // the journal entry below: with `serve --workers` the other workers hear of it before the client
    // can come back to one of them.
    retryAfters.answered(x, status, headers);
    if (x.fault === undefined) {
      // Journaled before it is written: with `serve --workers` the entry is then on its way to the
      // primary, which numbers entries as they come, before the client can read this answer and send
      // its next request to another worker (whose entry would otherwise get the lower id).
      note = journaled(x, step, status, headers, body, note, ms);
      x.res.writeHead(status, headers as string[]);
      // An answer given while the request's body still arrives (a 413, a 404 for a path outside
      // /mock) ends once the client stopped sending: see endAfterBody.
      if (hasBody(x.req) && !x.req.complete) endAfterBody(x.req, x.res, body);
      else endSoon(x.res, body); // http/write-batch.ts: the body goes out with the loop turn's other answers
    } else {
      const faultNote = writeFault(x.req, x.res, x.fault, status, headers, body); // its note says what was done
      note = journaled(x, step, status, headers, body, note === undefined ? faultNote : `${note}; ${faultNote}`, ms);
    }
    // No entry is built when request logging is off. A health poll of mockapi's own (rotate-key
    // waiting for the new revision) is not a request the user made: it gets no line.
    if (requestLog.enabled && (step !== null || x.req.headers[PROBE_HEADER] === undefined)) requestLog.log({ method: x.method, path: x.path, status, durationMs: ms, note });
  }

  /** Adds the request's own notes to `note` and tells the journal (unless `step` is null); returns the note. */
  function journaled(x: Exchange, step: Step | null, status: number, headers: readonly string[], body: AnswerBody, note: string | undefined, ms: number): string | undefined {
    if (x.notes !== undefined) note = [...(note === undefined ? [] : [note]), ...x.notes].join('; ');
    if (step !== null) {
      x.step = x.fault === undefined ? step : 'fault';
      x.answerHeaders = headers;
      x.answerBody = body;
      journal.record(x, status, note, ms);
    }
    return note;
  }

  function respondJson(x: Exchange, step: Step | null, status: number, body: AnswerBody, limitList: readonly string[] = NO_HEADERS, note?: string): void {
    send(x, step, status, ['content-type', JSON_CONTENT_TYPE, 'content-length', String(bodyLength(body)), ...limitList, ...x.extra], body, note);
  }

  const { withCors, filledHeaders, answerHeaders, limitsOf } = createAnswerHeaders(clock);

  /**
   * One of mockapi's own answers (`kind`): the default JSON answer, or as the config's `errors:`
   * reshapes it. A config without `errors:` goes straight to the default, precomputed bytes.
   */
  function respondOwn(x: Exchange, step: Step, kind: ErrorKind, status: number, body: AnswerBody, limitList: readonly string[], note: string | undefined, path: string, authenticated = true): boolean {
    const template = errorTemplate(x, kind);
    if (template === undefined) return false;
    const answer: OwnAnswer = { kind, status, headers: kind === 'missingKey' || kind === 'invalidKey' ? HEADERS_NO_KEY : NO_HEADERS, body, limits: limitList, path, authenticated };
    const rendered = renderOwnAnswer(x, template, answer, clock(), deps.answers.states);
    send(x, step, rendered.status, rendered.headers, rendered.body, note);
    return true;
  }

  /** {@link respondJson} for an answer `errors:` may reshape. */
  function respondError(x: Exchange, step: Step, kind: ErrorKind, status: number, body: AnswerBody, limitList: readonly string[], note: string | undefined, path: string): void {
    if (x.compiled.errors !== undefined && respondOwn(x, step, kind, status, body, limitList, note, path, step !== 'bad_request')) return;
    respondJson(x, step, status, body, limitList, note);
  }

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

  const retryAfters = createRetryAfterWatch(deps.clients ?? createClientTracker(), clock);
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
    if (deps.upstream?.takes(x, endpoint !== undefined) === true) return toUpstream(x, mockPath, verdict, deps.upstream);
    if (endpoint === undefined) {
      const near = closestEndpoint(x.method, mockPath, compiled.endpoints);
      const note = near === undefined ? undefined : `did you mean ${near.method} ${near.path}?`;
      return respondError(x, 'match', 'notFound', 404, notFoundBody(x.method, mockPath), limitsOf(x, verdict), note, mockPath);
    }
    x.endpoint = endpoint;
    if (endpoint.validation !== undefined && validateStep(x, endpoint.validation, mockPath, verdict)) return;
    if (endpoint.dynamic === undefined) return answerEndpoint(x, endpoint, verdict);
    answerDynamic({ x, endpoint, dynamic: endpoint.dynamic, verdict, mockPath }, dynamicDeps);
  }

  /** The upstream step: the request goes to the real API; its answer (or a 502/504) is sent with the mock's limit and CORS headers. */
  function toUpstream(x: Exchange, mockPath: string, verdict: LimitVerdict, upstream: UpstreamStep): void {
    // The target as the client sent it (still percent-encoded), after `server.basePath` (`/mock`).
    const url = x.req.url ?? '';
    const base = x.compiled.basePath;
    const target = base === '' ? url : url.startsWith(`${base}/`) || url.startsWith(`${base}?`) || url === base ? url.slice(base.length) : mockPath;
    upstream
      .forward(x, target.startsWith('/') ? target : `/${target}`, x.upstreamBody)
      .then((answer) => {
        if (x.res.destroyed) return;
        const own = [...limitsOf(x, verdict), ...x.extra];
        const ownNames = new Set(own.filter((_, i) => i % 2 === 0).map((n) => n.toLowerCase()));
        const headers: string[] = [];
        for (let i = 0; i < answer.headers.length; i += 2) if (!ownNames.has((answer.headers[i] as string).toLowerCase())) headers.push(answer.headers[i] as string, answer.headers[i + 1] as string);
        if (answer.stream !== undefined) return streamUpstream(x, answer.status, [...headers, ...own], answer.stream, answer.note);
        send(x, 'upstream', answer.status, [...headers, ...own], answer.body, answer.note);
      })
      .catch((err: unknown) => failed(x, err));
  }

  /** An upstream event stream: the head at once, each chunk as it arrives; journaled (without a body) and logged when it ends. */
  async function streamUpstream(x: Exchange, status: number, headers: string[], stream: AsyncIterable<Buffer>, note: string): Promise<void> {
    x.res.writeHead(status, headers);
    x.res.flushHeaders();
    try {
      for await (const chunk of stream) {
        if (x.res.destroyed) break;
        x.res.write(chunk);
      }
      x.res.end();
    } catch {
      x.res.destroy(); // the upstream broke off: so does this answer
      note = `${note}; broken off by the upstream`;
    }
    const ms = x.started === 0 ? 0 : performance.now() - x.started;
    journaled(x, 'upstream', status, headers, EMPTY_BODY, note, ms);
    if (requestLog.enabled) requestLog.log({ method: x.method, path: x.path, status, durationMs: ms, note });
  }

  /** The "validate" step (src/validate): true when it answered (`enforce` and the request broke the description). */
  function validateStep(x: Exchange, validation: EndpointValidation, mockPath: string, verdict: LimitVerdict): boolean {
    let violations;
    try {
      violations = validation.check({ mockPath, url: x.req.url ?? '/', headers: x.req.headers, body: x.bodyBytes, parsed: x.body });
    } catch (err) {
      // A schema of the description ajv cannot compile: the description's fault, not the client's.
      (x.notes ??= []).push(`not validated: ${(err as Error).message}`);
      return false;
    }
    x.violations = violations;
    deps.violations?.add(x.endpoint?.key ?? mockPath, violations.length);
    if (violations.length === 0) return false;
    if (validation.mode === 'report') {
      x.extra = withViolationsHeader(x.extra, violations.length);
      return false;
    }
    const answer = validation.answer(violations, { url: x.req.url ?? '/', headers: x.req.headers, body: x.body, now: clock() });
    send(x, 'validation', answer.status, [...answer.headers, ...limitsOf(x, verdict), ...x.extra], answer.body, `${violations.length} violation${violations.length === 1 ? '' : 's'} of the OpenAPI description`);
    return true;
  }

  /** A streamed answer (src/stream/writer.ts): journaled and logged when it ends, with its summary. */
  function sendStream(x: Exchange, status: number, headers: readonly string[], rendered: RenderedStream, fault: StreamFaultPlan | undefined, sends?: readonly PreparedSend[]): void {
    retryAfters.answered(x, status, headers);
    if (x.started === 0) x.started = performance.now();
    startStream({
      res: x.res, status, headers, rendered, headOnly: x.method === 'HEAD', started: x.started, ...(fault === undefined ? {} : { fault }),
      onEnd(summary, written, notes) {
        x.stream = summary;
        // Webhooks fire for a stream that sent all its events, as for any answer once sent (the journal entry names them).
        if (sends !== undefined && summary.ended === 'complete') (x.notes ??= []).push(...(deps.webhooks?.fire(sends) ?? []));
        const note = notes.length === 0 ? undefined : notes.join('; ');
        const logged = journaled(x, 'response', status, headers, written, note, summary.ms);
        if (requestLog.enabled) requestLog.log({ method: x.method, path: x.path, status, durationMs: summary.ms, note: logged });
      },
    });
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

  /**
   * Runs `step` where no caller would catch what it throws (a stream event, a timer): a bug there
   * (a RangeError from a stack overflow, say) becomes the 500 of {@link failed}, never an uncaught
   * exception that ends the process.
   */
  function guarded<A extends unknown[]>(x: Exchange, step: (x: Exchange, ...args: A) => void, ...args: A): void {
    try {
      step(x, ...args);
    } catch (err) {
      failed(x, err);
    }
  }

  /** A bug met while answering: logged, and answered 500 `internal_error` (or the connection closed when the head is out). */
  function failed(x: Exchange, err: unknown): void {
    logger.error(`internal error on ${x.method} ${x.path}: ${err instanceof Error ? (err.stack ?? String(err)) : String(err)}`);
    try {
      if (!x.res.headersSent) return respondJson(x, x.step, 500, internalErrorBody(), NO_HEADERS, 'internal error');
    } catch {
      // the 500 itself could not be written: close the connection below
    }
    x.res.destroy();
  }
}
