/**
 * The reply's contract: Reply, the one object every step answers through, and what it is built from
 * (ReplyOptions, with the journal's and early retries' interfaces). src/http/reply.ts builds it.
 */
import type { AnswerBody } from '../answer/answer-body.js';
import type { ErrorKind } from '../config/types.js';
import type { Logger } from '../logger.js';
import type { JournalStep } from '../wire-types.js';
import type { AnswerHeaders } from './answer-headers.js';
import type { Exchange } from './exchange.js';
import type { RefusalKind } from './refusals.js';
import type { RequestLogger } from './request-log.js';

/** Where answered requests go (the journal of src/control): told of each answer `send` writes. */
export interface JournalSink {
  /** True when a request must be recorded: entries are kept, or someone listens. */
  readonly enabled: boolean;
  record(x: Exchange, status: number, note: string | readonly string[] | undefined, ms: number): void;
}

/** Early retries (src/control/retry-after-watch.ts): the Retry-After each client was given. */
export interface RetryAfterWatch {
  /** After auth: notes an early retry; who the client is is looked up only once some Retry-After was given. */
  arrive(x: Exchange): void;
  /** As an answer is written: remembers a Retry-After that reaches the client. */
  answered(x: Exchange, status: number, headers: readonly string[]): void;
}

/** What the reply is built from; the journal, the clock and the scenario states `errors:` templates read are the request's session's (`x.scope`). */
export interface ReplyOptions {
  requestLog: RequestLogger;
  logger: Logger;
  retryAfters: RetryAfterWatch;
}

/**
 * How every step answers: one object, made once per server. {@link Reply.send} is the only writer of
 * a whole answer to `res`; it journals the answer and logs its line. The limit headers an answer
 * carries are those of `x.verdict` (none before the limits step).
 */
export interface Reply extends Pick<AnswerHeaders, 'withCors' | 'filledHeaders' | 'answerHeaders'> {
  /** Status, the complete header list and body, then the journal entry and the log line. `step` null: not journaled (health). */
  send(
    x: Exchange,
    step: JournalStep | null,
    status: number,
    headers: readonly string[],
    body: AnswerBody,
    note?: string,
  ): void;
  /** A JSON answer with its content type and length, the limit headers and the request's extra headers. */
  json(x: Exchange, step: JournalStep | null, status: number, body: AnswerBody, note?: string): void;
  /** One of mockapi's refusals (src/http/refusals.ts), as `errors:` may reshape it; `note` over the table's, `detail` for a body made from it (a fixed body's hint, `error.hint` of `errors:` templates). */
  refuse(x: Exchange, kind: RefusalKind, note?: string, detail?: string): void;
  /** One of mockapi's own answers as `errors:` reshapes `kind`; false when the config has no template for it. */
  own(
    x: Exchange,
    step: JournalStep,
    kind: ErrorKind,
    status: number,
    body: AnswerBody,
    note: string | undefined,
  ): boolean;
  /** The limit headers of `x.verdict`, in the configured styles. */
  limits(x: Exchange): readonly string[];
  /**
   * An answer whose head is out already and whose body went out over time (a stream): journaled
   * and logged now that it ended, `written` being what the journal keeps of it.
   */
  ended(
    x: Exchange,
    step: JournalStep,
    status: number,
    headers: readonly string[],
    written: AnswerBody,
    note: string | undefined,
    ms: number,
  ): void;
  /**
   * A stream (`stream:`) under a network fault, acting on its whole text: journaled (with its
   * `stream` record) and logged when it ends — a `slow` one once it has all gone out or the client
   * left, a `hang` when the connection closes, `reset`, `close` and `truncate` at once.
   */
  faultStream(
    x: Exchange,
    status: number,
    headers: readonly string[],
    stream: { text(): string; readonly events: number; eventsIn(bytes: number): number },
  ): void;
  /** Writes the head now, then each chunk as it comes; journaled (without a body) and logged once the chunks end. */
  pipe(
    x: Exchange,
    step: JournalStep,
    status: number,
    headers: readonly string[],
    chunks: AsyncIterable<Buffer>,
    note: string,
  ): Promise<void>;
  /** Runs `fn` where no caller would catch what it throws (a timer, a stream event): a bug there becomes the 500 of {@link Reply.failed}. */
  guarded<A extends unknown[]>(x: Exchange, fn: (x: Exchange, ...args: A) => void, ...args: A): void;
  /** A bug met while answering: logged, and answered 500 `internal_error` (or the connection closed when the head is out). */
  failed(x: Exchange, err: unknown): void;
  /** Early retries: the Retry-After each client was given (auth notes arrivals; streams note their head). */
  readonly retryAfters: RetryAfterWatch;
}
