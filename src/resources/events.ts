import type { Envelope } from '../config/types-webhooks.js';
import type { CompiledResourceSend } from './compile.js';
import type { ResourceContext } from './context.js';

/** An event a change sends to one target (what the webhook service's `emit` takes). */
export interface ResourceEvent {
  readonly type: string;
  readonly envelope: Envelope;
  readonly data: unknown;
  readonly target: string;
  /** The operation that caused it, for the delivery log (`POST /v1/payment_intents/:id/confirm`). */
  readonly endpoint: string | null;
  /** The session whose object changed (`''`: the default one): its delivery is that session's. */
  readonly session: string;
}

/** Where events go: the webhook service of the server, and the targets and event templates served now. */
export interface EventSink {
  /** Queues the event; returns the journal note naming the delivery. */
  emit(event: ResourceEvent, afterMs: number): string;
  /** The names of the targets configured now (an event without `to` goes to each enabled one). */
  targets(): readonly string[];
  /** The envelope `webhooks.events.<type>` gives, when it names the event. */
  envelope(type: string): Envelope | undefined;
}

/**
 * Sends the events of an action or a lifecycle move: each to its target (or every target), with
 * the object as its data object (`{ object: … }`) unless the item gives `data`, as deliveries of the
 * object's session. Returns the notes.
 */
export function sendEvents(
  sink: EventSink | undefined,
  sends: readonly CompiledResourceSend[],
  object: unknown,
  ctx: ResourceContext,
  fallback: Envelope,
  endpoint: string | null,
  session: string,
): string[] {
  if (sink === undefined || sends.length === 0) return [];
  const notes: string[] = [];
  const withObject = ctx.with(object);
  for (const send of sends) {
    const data = send.data === undefined ? { object } : send.data.evaluate(withObject);
    const envelope = sink.envelope(send.event) ?? fallback;
    const targets = send.to === undefined ? sink.targets() : [send.to];
    for (const target of targets)
      notes.push(sink.emit({ type: send.event, envelope, data, target, endpoint, session }, send.afterMs));
  }
  return notes;
}
