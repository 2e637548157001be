import { bodyLength, type AnswerBody } from '../answer/answer-body.js';
import { internalErrorBody, JSON_CONTENT_TYPE, HEADERS_NO_KEY } from '../answer/responses.js';
import type { ErrorKind } from '../config/types.js';
import { createClientTracker } from '../control/early-retries.js';
import type { Step } from '../control/journal-entry.js';
import type { RenderedStream, StreamFaultPlan } from '../stream/compile.js';
import { startStream } from '../stream/writer.js';
import type { PreparedSend } from '../webhooks/prepare.js';
import { errorTemplate, renderOwnAnswer, type OwnAnswer } from './error-writer.js';
import type { Exchange } from './exchange.js';
import type { HandlerDeps } from './handler.js';
import { hasBody } from './request-body.js';
import { endAfterBody } from './http-limits.js';
import { writeFault } from './fault-writer.js';
import { createRetryAfterWatch, type RetryAfterWatch } from './retry-after-watch.js';
import { endSoon } from './write-batch.js';

/** Sent by mockapi's own health polls (see state/confirm-servers.ts), which the request log leaves out. */
export const PROBE_HEADER = 'x-mockapi-probe';
const NO_HEADERS: readonly string[] = [];

/** The handler's writers: every answer of the request pipeline goes through {@link AnswerWriter.send}. */
export interface AnswerWriter {
  /** The only writer to `res`: status, the complete header list and body, then the journal entry and the log line. `step` null: not journaled (health). */
  send(x: Exchange, step: Step | null, status: number, headers: readonly string[], body: AnswerBody, note?: string): void;
  /** Adds the request's own notes to `note` and tells the journal (unless `step` is null); returns the note. */
  journaled(x: Exchange, step: Step | null, status: number, headers: readonly string[], body: AnswerBody, note: string | undefined, ms: number): string | undefined;
  /** A JSON answer with its content type and length, then `limitList` and the request's extra headers. */
  respondJson(x: Exchange, step: Step | null, status: number, body: AnswerBody, limitList?: readonly string[], note?: string): void;
  /** One of mockapi's own answers as the config's `errors:` reshapes it; false when it has no template for `kind`. */
  respondOwn(x: Exchange, step: Step, kind: ErrorKind, status: number, body: AnswerBody, limitList: readonly string[], note: string | undefined, path: string, authenticated?: boolean): boolean;
  /** {@link AnswerWriter.respondJson} for an answer `errors:` may reshape. */
  respondError(x: Exchange, step: Step, kind: ErrorKind, status: number, body: AnswerBody, limitList: readonly string[], note: string | undefined, path: string): void;
  /** A streamed answer (src/stream/writer.ts): journaled and logged when it ends, with its summary. */
  sendStream(x: Exchange, status: number, headers: readonly string[], rendered: RenderedStream, fault: StreamFaultPlan | undefined, sends?: readonly PreparedSend[]): void;
  /** Runs `step` where no caller would catch what it throws (a stream event, a timer): a bug there becomes the 500 of {@link AnswerWriter.failed}. */
  guarded<A extends unknown[]>(x: Exchange, step: (x: Exchange, ...args: A) => void, ...args: A): void;
  /** A bug met while answering: logged, and answered 500 `internal_error` (or the connection closed when the head is out). */
  failed(x: Exchange, err: unknown): void;
  /** Early retries: the Retry-After each client was given. */
  readonly retryAfters: RetryAfterWatch;
}

/** Builds the writers of one request handler. */
export function createAnswerWriter(deps: HandlerDeps): AnswerWriter {
  const { requestLog, journal, clock, logger } = deps;
  const retryAfters = createRetryAfterWatch(deps.clients ?? createClientTracker(), clock);

  function send(x: Exchange, step: Step | null, status: number, headers: readonly string[], body: AnswerBody, note?: string): void {
    // One reading serves the journal and the log line; none is taken when neither was on at arrival.
    const ms = x.started === 0 ? 0 : performance.now() - x.started;
    // A Retry-After that reaches a client past auth, remembered before it is written.
    retryAfters.answered(x, status, headers);
    if (x.fault === undefined) {
      // Journaled before it is written: an answer the client can read is already in the journal.
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

  function journaled(x: Exchange, step: Step | null, status: number, headers: readonly string[], body: AnswerBody, note: string | undefined, ms: number): string | undefined {
    // The journal keeps the notes a list (the inspector links a "webhook … whd_1" note); the log line joins them.
    const notes = x.notes === undefined ? note : [...(note === undefined ? [] : [note]), ...x.notes];
    if (step !== null) {
      x.step = x.fault === undefined ? step : 'fault';
      x.answerHeaders = headers;
      x.answerBody = body;
      journal.record(x, status, notes, ms);
    }
    return typeof notes === 'object' ? notes.join('; ') : notes;
  }

  function respondJson(x: Exchange, step: Step | null, status: number, body: AnswerBody, limitList: readonly string[] = NO_HEADERS, note?: string): void {
    send(x, step, status, ['content-type', JSON_CONTENT_TYPE, 'content-length', String(bodyLength(body)), ...limitList, ...x.extra], body, note);
  }

  // A config without `errors:` goes straight to the default, precomputed bytes.
  function respondOwn(x: Exchange, step: Step, kind: ErrorKind, status: number, body: AnswerBody, limitList: readonly string[], note: string | undefined, path: string, authenticated = true): boolean {
    const template = errorTemplate(x, kind);
    if (template === undefined) return false;
    const answer: OwnAnswer = { kind, status, headers: kind === 'missingKey' || kind === 'invalidKey' ? HEADERS_NO_KEY : NO_HEADERS, body, limits: limitList, path, authenticated };
    const rendered = renderOwnAnswer(x, template, answer, clock(), deps.answers.states);
    send(x, step, rendered.status, rendered.headers, rendered.body, note);
    return true;
  }

  function respondError(x: Exchange, step: Step, kind: ErrorKind, status: number, body: AnswerBody, limitList: readonly string[], note: string | undefined, path: string): void {
    if (x.compiled.errors !== undefined && respondOwn(x, step, kind, status, body, limitList, note, path, step !== 'bad_request')) return;
    respondJson(x, step, status, body, limitList, note);
  }

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

  // A RangeError from a stack overflow in a timer, say, becomes a 500, never an uncaught exception that ends the process.
  function guarded<A extends unknown[]>(x: Exchange, step: (x: Exchange, ...args: A) => void, ...args: A): void {
    try {
      step(x, ...args);
    } catch (err) {
      failed(x, err);
    }
  }

  function failed(x: Exchange, err: unknown): void {
    logger.error(`internal error on ${x.method} ${x.path}: ${err instanceof Error ? (err.stack ?? String(err)) : String(err)}`);
    try {
      if (!x.res.headersSent) return respondJson(x, x.step, 500, internalErrorBody(), NO_HEADERS, 'internal error');
    } catch {
      // the 500 itself could not be written: close the connection below
    }
    x.res.destroy();
  }

  return { send, journaled, respondJson, respondOwn, respondError, sendStream, guarded, failed, retryAfters };
}
