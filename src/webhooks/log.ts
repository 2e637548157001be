/** One attempt of a delivery, as admin answers show it. */
export interface DeliveryAttempt {
  /** ISO time of the attempt, on the server's clock. */
  readonly time: string;
  /** The receiver's status, or null when none came (refused, timed out). */
  readonly status: number | null;
  readonly ms: number;
  readonly error: string | null;
}

/** What happened to one event sent to one target. */
export type DeliveryStatus = 'pending' | 'delivered' | 'failed';

/** A delivery as admin answers, the event stream and `webhooks.waitFor` show it. Secrets never appear in it. */
export interface Delivery {
  /** `whd_<n>`, numbered from 1 in order of creation. */
  readonly id: string;
  readonly event: string;
  /** The event's id: the same on every attempt, and on a duplicate. */
  readonly eventId: string;
  readonly target: string;
  readonly url: string;
  /** `POST /v1/charges` for a `send`, null for a trigger or replay. */
  readonly endpoint: string | null;
  status: DeliveryStatus;
  attempts: DeliveryAttempt[];
  /** ISO time of the next attempt (server clock), null when none is due. */
  nextAttempt: string | null;
  /** The headers of the latest attempt (signatures included: they are not secrets). */
  headers: Record<string, string>;
  /** The bytes sent, as text. */
  readonly body: string;
  /** The chaos applied: `duplicate`, `reorder`, `badSignature`, `staleTimestamp`. */
  readonly chaos: string[];
  /** Why it failed for good, when it did. */
  error: string | null;
  /** The named session it belongs to; absent for the default session. */
  readonly session?: string;
}

/** What to look for in the delivery log. */
export interface DeliveryFilter {
  event?: string;
  target?: string;
  status?: DeliveryStatus;
  /** Only the deliveries of this session (`''`: the default one); absent: every session's. */
  session?: string;
  /** Only deliveries numbered above this (`whd_<n>`). */
  since?: number;
  limit?: number;
}

/** The number of a delivery id (`whd_12` → 12). */
export const deliveryNumber = (id: string): number => Number(id.slice(4));

/** What the log and its filters read of a delivery. */
export type LogItem = Pick<Delivery, 'id' | 'event' | 'target' | 'status'> & { readonly session?: string };

/** Whether `delivery` matches `filter` (limit aside). */
export function matchesDelivery(delivery: LogItem, filter: DeliveryFilter): boolean {
  if (filter.session !== undefined && (delivery.session ?? '') !== filter.session) return false;
  if (filter.event !== undefined && delivery.event !== filter.event) return false;
  if (filter.target !== undefined && delivery.target !== filter.target) return false;
  if (filter.status !== undefined && delivery.status !== filter.status) return false;
  if (filter.since !== undefined && deliveryNumber(delivery.id) <= filter.since) return false;
  return true;
}

/** The most memory (bytes, as `sizeOf` counts what each delivery keeps) the delivery log holds; past it the oldest go. */
export const LOG_MAX_BODY_CHARS = 64 * 1024 * 1024;

/**
 * A bounded log of deliveries, oldest first: past `capacity` deliveries, or past
 * {@link LOG_MAX_BODY_CHARS} of bodies (as `sizeOf` counts them), the oldest go (a pending one keeps
 * going; it only leaves the log), the newest always stays. Adding is O(1) amortised: the oldest are
 * dropped by moving a start index, and the array is compacted once that many have been dropped.
 */
export class DeliveryLog<T extends LogItem> {
  /** Those before `start` have left the log (undefined, so their bodies can be collected). */
  private items: Array<T | undefined> = [];
  private start = 0;
  private chars = 0;
  constructor(
    private capacity: () => number,
    private readonly maxChars = LOG_MAX_BODY_CHARS,
    private readonly sizeOf: (item: T) => number,
  ) {}

  add(delivery: T): void {
    this.items.push(delivery);
    this.chars += this.sizeOf(delivery);
    const keep = Math.max(1, this.capacity());
    while (
      this.items.length - this.start > 1 &&
      (this.items.length - this.start > keep || this.chars > this.maxChars)
    ) {
      this.chars -= this.sizeOf(this.items[this.start] as T);
      this.items[this.start++] = undefined;
    }
    if (this.start > 1024 && this.start * 2 > this.items.length) {
      this.items = this.items.slice(this.start);
      this.start = 0;
    }
  }

  find(id: string): T | undefined {
    for (let i = this.items.length - 1; i >= this.start; i--) if (this.items[i]?.id === id) return this.items[i];
    return undefined;
  }

  list(filter: DeliveryFilter = {}): T[] {
    const found: T[] = [];
    for (let i = this.start; i < this.items.length; i++) {
      const d = this.items[i] as T;
      if (matchesDelivery(d, filter)) found.push(d);
    }
    return filter.limit === undefined || found.length <= filter.limit
      ? found
      : found.slice(found.length - filter.limit);
  }

  clear(): void {
    this.items = [];
    this.start = 0;
    this.chars = 0;
  }
}
