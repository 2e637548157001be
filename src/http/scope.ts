import type { AnswerState } from '../answer/answer-state.js';
import type { Clock } from '../clock.js';
import type { KeyMatcher } from '../pipeline/auth.js';
import type { KeyLimits } from '../pipeline/key-limits.js';
import type { LimitGate, StoreLimitGate } from '../pipeline/limits.js';
import type { JournalSink } from './reply.js';

/**
 * What one request's session owns, as the core steps and the reply read it (`x.scope`): its
 * journal, its clock, its scenario states and sequences, its limits. The default session's scope
 * is the server's own parts, set on every exchange by the front; a scoping step (src/sessions)
 * replaces it with a named session's. Capabilities keep their own per-session state keyed by
 * {@link RequestScope.id} (stubs, resources), so this contract names no capability.
 */
export interface RequestScope {
  /** The session's id; `''` for the default session. */
  readonly id: string;
  /** Where the session's answered requests go. */
  readonly journal: JournalSink;
  /** The session's clock: its own virtual clock under `--clock`, else the server's. */
  readonly clock: Clock;
  /** Sequence positions, request counters and scenario states of the session. */
  readonly answers: AnswerState;
  /** The limits of `apiKey` (the key named `default`) in the session: its rate window and month. */
  readonly limits: LimitGate | StoreLimitGate;
  /** The keys of `keys:` and the endpoints' own windows, counted in the session. */
  readonly keyLimits: KeyLimits | undefined;
  /** A key made for this session alone (`sessions.byKey`): accepted as `apiKey` here, nowhere else. */
  readonly key: KeyMatcher | undefined;
}

/** The session id of the default session. */
export const DEFAULT_SCOPE_ID = '';
