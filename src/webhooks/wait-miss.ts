import { matchesDelivery, type DeliveryFilter, type LogItem } from './log.js';

// What a timed-out `webhooks/deliveries/wait` says, as `requests/wait` does (src/control/wait-miss.ts):
// the filter it waited on, and the deliveries that came closest to it, or that none came.

const FIELDS = ['event', 'target', 'status'] as const;
const SHOWN = 3;
const LOOKED_AT = 500;

/** `event=charge.succeeded, status=delivered`: the filter as a wait's timeout names it. */
export function describeDeliveryFilter(filter: DeliveryFilter): string {
  const parts = [...FIELDS, 'since' as const]
    .filter((name) => filter[name] !== undefined)
    .map((name) => `${name}=${String(filter[name])}`);
  return parts.length === 0 ? 'any delivery' : parts.join(', ');
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
  const asked = FIELDS.filter((name) => filter[name] !== undefined);
  const seen = list({ session: filter.session, since: filter.since, limit: LOOKED_AT });
  if (seen.length === 0) return 'no delivery came at all';
  const scored = seen
    .map((delivery, order) => ({
      delivery,
      order,
      differ: asked.filter((name) => !matchesDelivery(delivery, { [name]: filter[name] })),
    }))
    .filter(({ differ }) => differ.length > 0); // the matching ones are in the answer already
  if (scored.length === 0) return 'no other delivery came';
  scored.sort((a, b) => a.differ.length - b.differ.length || b.order - a.order);
  const shown = scored
    .slice(0, SHOWN)
    .map(
      ({ delivery, differ }) => `${describe(delivery)}: ${differ.join(', ')} differ${differ.length === 1 ? 's' : ''}`,
    );
  return `closest deliveries seen: ${shown.join('; ')}`;
}

function describe(delivery: LogItem): string {
  return `${delivery.id} ${delivery.event} → ${delivery.target} (${delivery.status})`;
}
