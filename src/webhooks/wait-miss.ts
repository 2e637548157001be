import { closestSeen, describeWaitFilter } from '../control/wait-miss.js';
import { matchesDelivery, type DeliveryFilter, type LogItem } from './log.js';

// What a timed-out `webhooks/deliveries/wait` says, as `requests/wait` does (src/control/wait-miss.ts):
// the filter it waited on, and the deliveries that came closest to it, or that none came.

const FIELDS = ['event', 'target', 'status'] as const;
const LOOKED_AT = 500;

/** `event=charge.succeeded, status=delivered`: the filter as a wait's timeout names it. */
export function describeDeliveryFilter(filter: DeliveryFilter): string {
  return describeWaitFilter(filter, [...FIELDS, 'since'], 'any delivery');
}

/**
 * The deliveries of the filter's session (after `since`) that came closest to the filter — most
 * fields matched, then newest — each with the fields that differ; or that none came at all.
 * `list` is the delivery log's own (oldest first, the last `limit`).
 */
export function closestDeliveries(
  list: (filter: DeliveryFilter) => readonly LogItem[],
  filter: DeliveryFilter,
): string {
  return closestSeen(
    list({ session: filter.session, since: filter.since, limit: LOOKED_AT }),
    FIELDS.filter((name) => filter[name] !== undefined),
    (delivery, name) => matchesDelivery(delivery, { [name]: filter[name as keyof DeliveryFilter] }),
    describe,
    { none: 'no delivery came at all', noOther: 'no other delivery came', plural: 'deliveries' },
  );
}

function describe(delivery: LogItem): string {
  return `${delivery.id} ${delivery.event} → ${delivery.target} (${delivery.status})`;
}
