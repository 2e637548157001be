import type { IncomingMessage, ServerResponse } from 'node:http';
import type { CompiledConfig, CompiledEndpoint } from '../answer/compile.js';
import type { FaultConfig } from '../config/types.js';
import type { AnswerBody } from '../answer/answer-body.js';
import type { AuthVerdict, NamedKey } from '../pipeline/auth.js';
import type { LimitVerdict } from '../pipeline/limits.js';
import type { JournalStep, StreamSummary, Violation } from '../wire-types.js';
import type { RequestScope } from './scope.js';

/**
 * What the request path knows about one request while its steps (src/request-steps.ts) walk it.
 * Made once per request with every field present (one object shape for the whole hot path); a
 * step that learns something later steps or the journal need writes it here — its own field,
 * optional, documented with the step that sets it.
 */
export interface Exchange {
  req: IncomingMessage;
  res: ServerResponse;
  started: number;
  method: string;
  /** Full request path as sent, without the query string. */
  path: string;
  /** The path after `server.basePath` (`/mock/users/42` → `/users/42`); the whole path for a request outside it. */
  mockPath: string;
  compiled: CompiledConfig;
  /**
   * The request's session: its journal, clock, scenario states and limits. The default session's
   * (the server's own parts) until a scoping step (src/sessions) names another.
   */
  scope: RequestScope;
  /** Headers every answer to this request carries (CORS). */
  extra: readonly string[];
  /**
   * Which answer of the endpoint answered (`response`): its `name`, else its position
   * (`responses[1].sequence[0]`), `"response"` for a plain one; null when no answer did (401, 429,
   * 404, simulated 500…). Set before `send`, for the journal.
   */
  answer: string | null;
  /** The request body as answers read it (`body`), read only for an endpoint whose answers or validation read it. */
  body: unknown;
  // For the journal (control/journal.ts): which step answered, the endpoint, the body's first 64 KiB.
  step: JournalStep;
  /** The endpoint that answers: set by the match steps (a run-time stub, else the config's). */
  endpoint: CompiledEndpoint | undefined;
  /** The limits step's verdict: the limit headers every later answer carries; undefined before it. */
  verdict: LimitVerdict | undefined;
  journalBody: Buffer | undefined;
  bodyTruncated: boolean;
  /** The answer `send` writes, for the journal: references, set just before it is journaled. */
  answerHeaders: readonly string[];
  answerBody: AnswerBody | undefined;
  /** The network fault this request gets in place of a normal answer, decided on arrival. */
  fault?: FaultConfig;
  /** Notes for the log line and the journal (`notes`): a shaped delay, an early retry. */
  notes?: string[];
  /** The key of `keys:` the request passed auth with; absent for `apiKey` (the key named `default`) and before auth. */
  named?: NamedKey;
  /**
   * How the request's credential matched `compiled.key` when it passed auth with it (`ok`, or the
   * key of `keys:`): the journal's view names the key from it instead of hashing the credential again.
   */
  keyVerdict: AuthVerdict | undefined;
  /** The whole request body, kept when a step wants it whole (an answer or validation that reads it, a request sent upstream). */
  wholeBody?: Buffer;
  /** The request's violations of the OpenAPI description, when its endpoint validates requests (the validate step). */
  violations?: readonly Violation[];
  /** Who sent the request (early retries), set once auth has passed and a Retry-After was ever given. */
  client?: string;
  /** A streamed answer's summary, set when the stream has ended (for the journal). */
  stream?: StreamSummary;
  /** The `usage` a streamed answer carried in the events it sent (merged), set when it ended: what a cost's settle reads as `response.body.usage`. */
  usage?: Readonly<Record<string, unknown>>;
  /**
   * Told once, when the request's answer has been decided and goes out (a stream's, when it ended),
   * just before it is journaled: a step that must act after the answer sets it (the limits step
   * settles a request's cost there), and it may add notes. Apart from {@link onAnswer}, which the
   * step that keeps answers (idempotency keys) owns and replaces, so neither undoes the other.
   */
  afterAnswer?: AfterAnswer;
  /**
   * The session the request named (header, baggage or path prefix), set by the scoping step at the
   * front; for an admin call, the session it acts on unless its query names another.
   */
  session?: string;
  /**
   * Told of the answer as the reply writes it (a step that keeps answers, as idempotency keys do):
   * status, headers and body as meant, a fault's cut notwithstanding; `streamed` for an answer
   * whose body went out over time (not kept whole).
   */
  onAnswer?: (answer: AnsweredExchange) => void;
  /** The journal entry's id, once the request is journaled (an object's history names it). */
  journalId?: number;
  /**
   * The answer refuses what the request sent (a body a resource cannot read, a value of the wrong
   * type): a validation 400, which an idempotency key does not keep (Stripe keeps no result for a
   * request whose parameters failed validation).
   */
  invalidRequest?: boolean;
}

/** What {@link Exchange.onAnswer} is told. */
export interface AnsweredExchange {
  readonly step: JournalStep | null;
  readonly status: number;
  readonly headers: readonly string[];
  readonly body: AnswerBody;
  readonly streamed: boolean;
}

/** What {@link Exchange.afterAnswer} is told: the step that answered, the status and the body written (a stream's text). */
export type AfterAnswer = (x: Exchange, step: JournalStep, status: number, body: AnswerBody) => void;

/** The notes of a request (`notes`): what the journal records beside its entry. */
export function notesOf(x: Exchange): readonly string[] {
  return x.notes ?? [];
}
