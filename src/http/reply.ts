import { bodyLength, type AnswerBody } from '../answer/answer-body.js';
import { internalErrorBody, JSON_CONTENT_TYPE, HEADERS_NO_KEY } from '../answer/responses.js';
import { answerFirst } from '../answer/server-headers.js';
import type { ErrorKind } from '../config/types.js';
import type { JournalStep } from '../wire-types.js';
import { createAnswerHeaders } from './answer-headers.js';
import { errorTemplate, renderOwnAnswer, type OwnAnswer } from './error-writer.js';
import type { Exchange } from './exchange.js';
import { hasBody } from './request-body.js';
import { endAfterBody } from './http-limits.js';
import { writeFault } from './fault-writer.js';
import { REFUSALS, REFUSED_BY_METER, type RefusalKind } from './refusals.js';
import type { Reply, ReplyOptions } from './reply-types.js';
import { endSoon } from './write-batch.js';

/** Sent by mockapi's own health polls (see state/confirm-servers.ts), which the request log leaves out. */
export const PROBE_HEADER = 'x-mockapi-probe';
const NO_HEADERS: readonly string[] = [];

export type { JournalSink, Reply, ReplyOptions, RetryAfterWatch } from './reply-types.js';

/**
 * An answer's list as sent: when the config has `server.headers`, an answer's own header of one of
 * their names is kept and the server's dropped (see answerFirst); else the list as it is.
 */
export function answerHeadersWin(x: Exchange, headers: readonly string[]): readonly string[] {
  const own = x.compiled.serverHeaders;
  return own === undefined ? headers : answerFirst(headers, own.names);
}

/** What the journal keeps of a faulted stream's text, as of a stream written over time (src/stream/writer.ts). */
const STREAM_WRITTEN_KEPT = 64 * 1024;

/** Builds the reply of one server. */
export function createReply(options: ReplyOptions): Reply {
  const { requestLog, logger, retryAfters } = options;
  const { withCors, filledHeaders, answerHeaders, limitsOf } = createAnswerHeaders();

  function send(
    x: Exchange,
    step: JournalStep | null,
    status: number,
    headers: readonly string[],
    body: AnswerBody,
    note?: string,
  ): void {
    // One reading serves the journal and the log line; none is taken when neither was on at arrival.
    const ms = x.started === 0 ? 0 : performance.now() - x.started;
    headers = answerHeadersWin(x, headers);
    // A Retry-After that reaches a client past auth, remembered before it is written.
    retryAfters.answered(x, status, headers);
    x.onAnswer?.({ step, status, headers, body, streamed: false });
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
    if (requestLog.enabled && (step !== null || x.req.headers[PROBE_HEADER] === undefined))
      requestLog.log({ method: x.method, path: x.path, status, durationMs: ms, note });
  }

  /** Adds the request's own notes to `note` and tells the journal (unless `step` is null); returns the note. */
  function journaled(
    x: Exchange,
    step: JournalStep | null,
    status: number,
    headers: readonly string[],
    body: AnswerBody,
    note: string | undefined,
    ms: number,
  ): string | undefined {
    if (x.afterAnswer !== undefined && step !== null) {
      const after = x.afterAnswer;
      x.afterAnswer = undefined; // told once
      try {
        after(x, step, status, body);
      } catch (err) {
        logger.error(
          `internal error after answering ${x.method} ${x.path}: ${err instanceof Error ? (err.stack ?? String(err)) : String(err)}`,
        );
      }
    }
    // The journal keeps the notes a list (the inspector links a "webhook … whd_1" note); the log line joins them.
    const notes = x.notes === undefined ? note : [...(note === undefined ? [] : [note]), ...x.notes];
    if (step !== null) {
      x.step = x.fault === undefined ? step : 'fault';
      x.answerHeaders = headers;
      x.answerBody = body;
      x.scope.journal.record(x, status, notes, ms);
    }
    return typeof notes === 'object' ? notes.join('; ') : notes;
  }

  function jsonWith(
    x: Exchange,
    step: JournalStep | null,
    status: number,
    body: AnswerBody,
    limitList: readonly string[],
    note?: string,
  ): void {
    send(
      x,
      step,
      status,
      ['content-type', JSON_CONTENT_TYPE, 'content-length', String(bodyLength(body)), ...limitList, ...x.extra],
      body,
      note,
    );
  }

  // A config without `errors:` goes straight to the default, precomputed bytes.
  function reshaped(
    x: Exchange,
    step: JournalStep,
    kind: ErrorKind,
    status: number,
    body: AnswerBody,
    note: string | undefined,
    authenticated: boolean,
    hint?: string,
    meterMessage?: string,
  ): boolean {
    const template = errorTemplate(x, kind);
    if (template === undefined) return false;
    const answer: OwnAnswer = {
      kind,
      status,
      headers: kind === 'missingKey' || kind === 'invalidKey' ? HEADERS_NO_KEY : NO_HEADERS,
      body,
      limits: limitsOf(x),
      path: x.mockPath,
      authenticated,
      hint,
      meterMessage,
    };
    const rendered = renderOwnAnswer(x, template, answer, x.scope.clock(), x.scope.answers.states);
    send(x, step, rendered.status, rendered.headers, rendered.body, note);
    return true;
  }

  function refuse(x: Exchange, kind: RefusalKind, note?: string, detail = ''): void {
    const refusal = REFUSALS[kind];
    const body = typeof refusal.body === 'function' ? refusal.body(x, detail) : refusal.body;
    note ??= refusal.note;
    // A meter's refusal gives its sentence (`error.meter.message`); another refusal's detail that a
    // fixed body made no use of is the hint `errors:` templates read (`error.hint`).
    const byMeter = x.verdict?.meter !== undefined && detail !== '' && REFUSED_BY_METER.has(kind);
    if (
      x.compiled.errors !== undefined &&
      reshaped(
        x,
        refusal.step,
        kind,
        refusal.status,
        body,
        note,
        refusal.authenticated,
        byMeter || typeof refusal.body === 'function' || detail === '' ? undefined : detail,
        byMeter ? detail : undefined,
      )
    )
      return;
    if (refusal.headers !== undefined)
      return send(
        x,
        refusal.step,
        refusal.status,
        withCors(x, refusal.headers, refusal.anyOrigin ?? refusal.headers),
        body,
        note,
      );
    jsonWith(x, refusal.step, refusal.status, body, limitsOf(x), note);
  }

  function ended(
    x: Exchange,
    step: JournalStep,
    status: number,
    headers: readonly string[],
    written: AnswerBody,
    note: string | undefined,
    ms: number,
  ): void {
    x.onAnswer?.({ step, status, headers, body: written, streamed: true });
    const logged = journaled(x, step, status, headers, written, note, ms);
    if (requestLog.enabled) requestLog.log({ method: x.method, path: x.path, status, durationMs: ms, note: logged });
  }

  function faultStream(
    x: Exchange,
    status: number,
    headers: readonly string[],
    stream: { text(): string; readonly events: number; eventsIn(bytes: number): number },
  ): void {
    headers = answerHeadersWin(x, headers);
    retryAfters.answered(x, status, headers);
    if (x.started === 0) x.started = performance.now();
    const started = x.started;
    const text = stream.text();
    const kind = x.fault!.kind;
    // The head goes out at once with a slow or truncated answer; reset, close and hang send none.
    const firstByteMs = kind === 'slow' || kind === 'truncate' ? performance.now() - started : null;
    writeFault(x.req, x.res, x.fault!, status, headers, text, (bytes, how, note) =>
      guarded(x, () => {
        const ms = performance.now() - started;
        const sent = how === 'complete' ? stream.events : stream.eventsIn(bytes);
        x.stream = { events: stream.events, sent, ended: how, firstByteMs, ms };
        // What was written, as of a stream written over time: its first 64 KiB.
        const written =
          how === 'complete' ? text : Buffer.from(text).subarray(0, Math.min(bytes, STREAM_WRITTEN_KEPT)).toString();
        ended(x, 'response', status, headers, written.slice(0, STREAM_WRITTEN_KEPT), note, ms);
      }),
    );
  }

  async function pipe(
    x: Exchange,
    step: JournalStep,
    status: number,
    headers: readonly string[],
    chunks: AsyncIterable<Buffer>,
    note: string,
  ): Promise<void> {
    headers = answerHeadersWin(x, headers);
    x.res.writeHead(status, headers as string[]);
    x.res.flushHeaders();
    try {
      for await (const chunk of chunks) {
        if (x.res.destroyed) break;
        x.res.write(chunk);
      }
      x.res.end();
    } catch {
      x.res.destroy(); // the source broke off: so does this answer
      note = `${note}; broken off by the upstream`;
    }
    const ms = x.started === 0 ? 0 : performance.now() - x.started;
    ended(x, step, status, headers, '', note, ms);
  }

  // A RangeError from a stack overflow in a timer, say, becomes a 500, never an uncaught exception that ends the process.
  function guarded<A extends unknown[]>(x: Exchange, fn: (x: Exchange, ...args: A) => void, ...args: A): void {
    try {
      fn(x, ...args);
    } catch (err) {
      failed(x, err);
    }
  }

  function failed(x: Exchange, err: unknown): void {
    logger.error(
      `internal error on ${x.method} ${x.path}: ${err instanceof Error ? (err.stack ?? String(err)) : String(err)}`,
    );
    try {
      if (!x.res.headersSent) return jsonWith(x, x.step, 500, internalErrorBody(), NO_HEADERS, 'internal error');
    } catch {
      // the 500 itself could not be written: close the connection below
    }
    x.res.destroy();
  }

  return {
    send,
    json: (x, step, status, body, note) => jsonWith(x, step, status, body, limitsOf(x), note),
    refuse,
    own: (x, step, kind, status, body, note) => reshaped(x, step, kind, status, body, note, true),
    limits: limitsOf,
    ended,
    faultStream,
    pipe,
    guarded,
    failed,
    retryAfters,
    withCors,
    filledHeaders,
    answerHeaders,
  };
}
