import type { Envelope } from '../config/types-webhooks.js';

/** What an envelope wraps: the event's id, type, time on the server's clock, and data. */
export interface EventParts {
  readonly id: string;
  readonly type: string;
  /** Milliseconds since the epoch, on the server's (possibly virtual) clock. */
  readonly created: number;
  readonly data: unknown;
  /** `JSON.stringify(data ?? {})`, when already known (data the config holds as is, written once). */
  readonly dataText?: string | undefined;
}

/** The prefix of event ids per envelope, as the real services write them. */
export function idPrefix(envelope: Envelope): string {
  return envelope === 'stripe' ? 'evt_' : envelope === 'standard' ? 'msg_' : '';
}

/**
 * The event as sent: `stripe` → `{ id, object: "event", api_version, created, data, livemode: false,
 * pending_webhooks, request, type }`; `standard` → `{ type, timestamp, data }`; `github` and `none` → the data alone.
 */
export function wrapEvent(envelope: Envelope, event: EventParts): unknown {
  switch (envelope) {
    case 'stripe':
      return {
        id: event.id,
        object: 'event',
        api_version: '2024-06-20',
        created: Math.floor(event.created / 1000),
        data: event.data ?? {},
        livemode: false,
        pending_webhooks: 1,
        request: { id: null, idempotency_key: null },
        type: event.type,
      };
    case 'standard':
      return { type: event.type, timestamp: new Date(event.created).toISOString(), data: event.data ?? {} };
    case 'github':
    case 'none':
      return event.data ?? {};
  }
}

const typeTexts = new Map<string, string>();
/** `JSON.stringify(type)`, kept per event type (the config names a few). */
function typeText(type: string): string {
  let text = typeTexts.get(type);
  if (text === undefined) {
    if (typeTexts.size >= 256) typeTexts.clear();
    typeTexts.set(type, (text = JSON.stringify(type)));
  }
  return text;
}

/**
 * The event as sent, as text: what `JSON.stringify(wrapEvent(…))` writes, with the envelope's own
 * fields written from a template so that only the id, type and data are serialised per event.
 */
export function eventText(envelope: Envelope, event: EventParts): string {
  const data = event.dataText ?? (JSON.stringify(event.data ?? {}) as string | undefined);
  // Data JSON cannot write (a function, a symbol) drops the field: the general path says how.
  if (data === undefined) return JSON.stringify(wrapEvent(envelope, event));
  switch (envelope) {
    case 'stripe':
      return `{"id":${JSON.stringify(event.id)},"object":"event","api_version":"2024-06-20","created":${Math.floor(event.created / 1000)},"data":${data},"livemode":false,"pending_webhooks":1,"request":{"id":null,"idempotency_key":null},"type":${typeText(event.type)}}`;
    case 'standard':
      return `{"type":${typeText(event.type)},"timestamp":"${new Date(event.created).toISOString()}","data":${data}}`;
    case 'github':
    case 'none':
      return data;
  }
}
