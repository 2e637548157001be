import type { StreamSummary } from '../stream/writer.js';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { CompiledConfig, CompiledEndpoint } from '../answer/compile.js';
import type { FaultConfig } from '../config/types.js';
import type { Step } from '../control/journal-entry.js';
import type { AnswerBody } from '../answer/answer-body.js';
import type { NamedKey } from '../pipeline/auth.js';
import type { Violation } from '../validate/violations.js';

/** What the handler knows about one request while it walks the pipeline. */
export interface Exchange {
  req: IncomingMessage;
  res: ServerResponse;
  started: number;
  method: string;
  /** Full request path as sent, without the query string. */
  path: string;
  compiled: CompiledConfig;
  /** Headers every answer to this request carries (CORS). */
  extra: readonly string[];
  /**
   * Which answer of the endpoint answered (`response`): its `name`, else its position
   * (`responses[1].sequence[0]`), `"response"` for a plain one; null when no answer did (401, 429,
   * 404, simulated 500…). Set before `send`, for the journal.
   */
  answer: string | null;
  /** The request body, read only for an endpoint whose answers read `body`. */
  body: unknown;
  // For the journal (control/journal.ts): which step answered, the endpoint, the body's first 64 KiB.
  step: Step;
  endpoint: CompiledEndpoint | undefined;
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
  /** The whole request body, kept only for a request that may go upstream. */
  upstreamBody?: Buffer;
  /** The whole request body, kept for an endpoint that validates it. */
  bodyBytes?: Buffer | undefined;
  /** The request's violations of the OpenAPI description, when its endpoint validates requests. */
  violations?: readonly Violation[];
  /** Who sent the request (early retries), set once auth has passed and a Retry-After was ever given. */
  client?: string;
  /** A streamed answer's summary, set when the stream has ended (for the journal). */
  stream?: StreamSummary;
}

/** The notes of a request (`notes`): what the journal records beside its entry. */
export function notesOf(x: Exchange): readonly string[] {
  return x.notes ?? [];
}
