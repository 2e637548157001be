import type { Clock } from '../clock.js';
import type { Envelope } from '../config/types-webhooks.js';
import type { CompiledTarget } from './compile.js';
import type { HeldDelivery } from './held.js';
import type { DeliveryFilter } from './log.js';
import type { AttemptOutcome, AttemptSender } from './sender.js';

/** Per target: deliveries pending, delivered and failed. */
export type Counts = { pending: number; delivered: number; failed: number };

/** An event to send to one target. */
export interface OutgoingEvent {
  readonly type: string;
  readonly envelope: Envelope;
  readonly data: unknown;
  /** `JSON.stringify(data ?? {})`, when already known (see `staticDataText`). */
  readonly dataText?: string | undefined;
  readonly target: string;
  /** In place of the target's URL. */
  readonly url?: string | undefined;
  readonly endpoint: string | null;
  /** The session whose request, object or admin call made it (`''` or absent: the default session). */
  readonly session?: string | undefined;
}

/** Per target: what the admin API changed at run time (kept across reloads). */
export interface TargetOverride {
  url?: string;
  disabled?: boolean;
}

/** Options of {@link createDispatcher}. */
export interface DispatcherOptions {
  /** The server's clock (virtual or real): contents and schedules follow it. */
  clock: Clock;
  /** The real clock: signatures follow it (a receiver compares with its own). */
  realClock?: Clock;
  /** The seed of event ids and chaos (their own streams, apart from the fail rate's). */
  seed: () => number;
  /** The target named so in the config now served. */
  target(name: string): CompiledTarget | undefined;
  /** How many deliveries the log keeps. */
  capacity: () => number;
  /** Told of every change to a delivery. */
  onChange(delivery: HeldDelivery): void;
  /** Makes the attempts (default: a thread of their own, see thread-sender.ts). */
  sender?: (report: (outcomes: AttemptOutcome[]) => void, lost: (reason: string) => void) => AttemptSender;
}

/** The deliveries of one server: queue, schedule on the server's clock, attempts, log. */
export interface Dispatcher {
  /** Makes the event and queues it; the first attempt waits `afterMs` (server clock). */
  send(event: OutgoingEvent, afterMs: number): HeldDelivery;
  replay(id: string): HeldDelivery | undefined;
  list(filter?: DeliveryFilter): HeldDelivery[];
  /** Per target: pending, delivered and failed counts. */
  counts(): ReadonlyMap<string, Readonly<Counts>>;
  override(name: string, change: TargetOverride): TargetOverride;
  overrides(): ReadonlyMap<string, TargetOverride>;
  /** The server's clock moved: attempts due by the new time go now. */
  clockMoved(): void;
  /** Deliveries not finished. */
  pending(): number;
  /** Resolves once nothing is pending, or after `ms` (real time); true when nothing is. */
  drain(ms: number): Promise<boolean>;
  /** Stops every timer and attempt; what was pending stays pending. */
  close(): void;
  clear(): void;
}
