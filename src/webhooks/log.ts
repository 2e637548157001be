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
}

/** What to look for in the delivery log. */
export interface DeliveryFilter {
  event?: string;
  target?: string;
  status?: DeliveryStatus;
  /** Only deliveries numbered above this (`whd_<n>`). */
  since?: number;
  limit?: number;
}

/** The number of a delivery id (`whd_12` → 12). */
export const deliveryNumber = (id: string): number => Number(id.slice(4));

/** Whether `delivery` matches `filter` (limit aside). */
export function matchesDelivery(delivery: Delivery, filter: DeliveryFilter): boolean {
  if (filter.event !== undefined && delivery.event !== filter.event) return false;
  if (filter.target !== undefined && delivery.target !== filter.target) return false;
  if (filter.status !== undefined && delivery.status !== filter.status) return false;
  if (filter.since !== undefined && deliveryNumber(delivery.id) <= filter.since) return false;
  return true;
}

/** A bounded log of deliveries, oldest first: past `capacity`, the oldest finished ones go. */
export class DeliveryLog {
  private items: Delivery[] = [];
  constructor(private capacity: () => number) {}

  add(delivery: Delivery): void {
    this.items.push(delivery);
    const over = this.items.length - Math.max(1, this.capacity());
    if (over > 0) this.items.splice(0, over);
  }

  find(id: string): Delivery | undefined {
    return this.items.find((d) => d.id === id);
  }

  list(filter: DeliveryFilter = {}): Delivery[] {
    const found = this.items.filter((d) => matchesDelivery(d, filter));
    return filter.limit === undefined || found.length <= filter.limit ? found : found.slice(found.length - filter.limit);
  }

  clear(): void {
    this.items = [];
  }
}
