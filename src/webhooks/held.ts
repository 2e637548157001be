import type { Envelope } from '../config/types-webhooks.js';
import type { CompiledTarget } from './compile.js';
import { eventIdAt, type ChaosFlags, type EventIdPlace } from './draws.js';
import { eventText } from './envelope.js';
import { isoTime } from '../iso-time.js';
import type { Delivery, DeliveryStatus } from './log.js';
import { attemptHeaders, type ResolvedSign } from './sign.js';

/**
 * What an event's bytes are made of: its envelope, type, time, data (as JSON text) and the place of
 * its id on the id stream. A delivery and its duplicates and replays share one. The id and the body
 * are pure functions of these, so the server's thread writes them only when a delivery is shown (and
 * keeps them then); the delivery thread writes them itself for the bytes it sends.
 */
export class EventSource {
  /**
   * The memory kept for this event, in bytes, against the bounds of the log and of pending
   * deliveries: its data's JSON text (two bytes a character where a character is past Latin-1, as
   * V8 then stores the whole text), the type twice, and 512 for the rest (the objects, the id, the
   * envelope's own text). The body is never kept: it is written from these each time it is needed.
   */
  readonly size: number;
  private idText: string | undefined;
  constructor(
    readonly envelope: Envelope,
    readonly type: string,
    /** Milliseconds since the epoch, on the server's (possibly virtual) clock. */
    readonly created: number,
    /** `JSON.stringify(data ?? {})`. */
    readonly dataText: string,
    /** Where the event id sits on its stream. */
    readonly idPlace: EventIdPlace,
  ) {
    this.size = textBytes(dataText) + 2 * textBytes(type) + 512;
  }

  get eventId(): string {
    return (this.idText ??= eventIdAt(this.idPlace, this.envelope));
  }

  /** The bytes sent, as text: written anew each time (a delivery shown twice costs the writing twice, and keeps nothing). */
  get body(): string {
    return eventText(this.envelope, {
      id: this.eventId,
      type: this.type,
      created: this.created,
      data: undefined,
      dataText: this.dataText,
    });
  }
}

/** What V8 keeps for `text`: one byte a character, or two when any character is past Latin-1. */
function textBytes(text: string): number {
  return /[^\u0000-\u00ff]/.test(text) ? 2 * text.length : text.length;
}

/** One attempt as the server's thread keeps it: the time as a number (written as ISO text when shown). */
interface HeldAttempt {
  readonly at: number;
  readonly status: number | null;
  readonly ms: number;
  readonly error: string | null;
}

const NO_ATTEMPTS: readonly HeldAttempt[] = Object.freeze([]);

/**
 * A delivery as the server's thread holds it: numbers and references, no text it can put off
 * writing. Every answer with a `send` makes one, so it is one object with the scheduling fields on
 * it; the event id, the body, the ISO times and the signature headers are written when the delivery
 * is shown ({@link toJSON}: admin answers, the event stream, the inspector), which most never are.
 */
export class HeldDelivery {
  status: DeliveryStatus = 'pending';
  error: string | null = null;
  /** Server-clock time the next attempt is due (the schedule's key while queued). */
  dueAt: number;
  /** The same while one is due; null while an attempt is out and once finished. */
  nextAt: number | null;
  /** Server-clock time the attempt in flight started at. */
  startedAt = 0;
  /** Real-clock seconds the attempt in flight is signed with. */
  signedAt = 0;
  /** The target the attempt in flight went to (its retry schedule decides what follows). */
  sentTo: CompiledTarget | undefined;
  private attemptList: HeldAttempt[] | readonly HeldAttempt[] = NO_ATTEMPTS;
  /** What the latest signed attempt was signed with (its headers are written from it when shown). */
  private signedWith: ResolvedSign | undefined;
  private signedTimestamp = 0;

  constructor(
    /** `whd_<n>`. */
    readonly id: string,
    readonly target: string,
    readonly url: string,
    readonly endpoint: string | null,
    readonly source: EventSource,
    readonly flags: ChaosFlags,
    readonly chaos: string[],
    dueAt: number,
    /** The session it belongs to (`''`: the default one): only admin calls naming it see it. */
    readonly session: string,
  ) {
    this.dueAt = dueAt;
    this.nextAt = dueAt;
  }

  get event(): string {
    return this.source.type;
  }

  get eventId(): string {
    return this.source.eventId;
  }

  get body(): string {
    return this.source.body;
  }

  get attemptCount(): number {
    return this.attemptList.length;
  }

  /**
   * The result of the attempt that went out last; `sign` when it got as far as being signed, with
   * the target's signing it went out with and {@link signedAt} (its headers are then the latest).
   */
  record(attempt: HeldAttempt, sign: ResolvedSign | undefined): void {
    if (this.attemptList === NO_ATTEMPTS) this.attemptList = [];
    (this.attemptList as HeldAttempt[]).push(attempt);
    if (sign === undefined) return;
    this.signedWith = sign;
    this.signedTimestamp = this.signedAt;
  }

  /** The headers of the latest signed attempt (signatures included: they are not secrets). */
  headers(): Record<string, string> {
    if (this.signedWith === undefined) return {};
    return attemptHeaders(
      this.signedWith,
      Buffer.from(this.body, 'utf8'),
      this.eventId,
      this.event,
      this.signedTimestamp,
      this.flags.badSignature,
    );
  }

  /** The delivery as admin answers, the event stream and `webhooks.waitFor` show it (the keys in the order they always had). */
  toJSON(): Delivery {
    return {
      id: this.id,
      event: this.event,
      eventId: this.eventId,
      target: this.target,
      url: this.url,
      endpoint: this.endpoint,
      status: this.status,
      attempts: this.attemptList.map((a) => ({ time: isoTime(a.at), status: a.status, ms: a.ms, error: a.error })),
      nextAttempt: this.nextAt === null ? null : isoTime(this.nextAt),
      headers: this.headers(),
      body: this.body,
      chaos: this.chaos,
      error: this.error,
      ...(this.session === '' ? {} : { session: this.session }),
    };
  }
}
