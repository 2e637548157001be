import { ControlError } from '../control/control-error.js';
import type { DeliveryFilter, DeliveryStatus } from './log.js';
import type { TriggerInput } from './service.js';

/** The statuses a delivery can have. */
export const DELIVERY_STATUSES: readonly DeliveryStatus[] = ['pending', 'delivered', 'failed'];

/**
 * Checks a delivery filter, from the query string or given in process (`webhooks.waitFor(filter)`):
 * a value no delivery can have (`status: 'bogus'`) is a 400 at once, not a wait that runs out of time.
 */
export function checkDeliveryFilter(filter: DeliveryFilter): void {
  const status: unknown = filter.status;
  if (status !== undefined && !DELIVERY_STATUSES.includes(status as DeliveryStatus))
    throw new ControlError(
      400,
      'bad_request',
      `status must be one of ${DELIVERY_STATUSES.join(', ')}, got ${JSON.stringify(status)}`,
    );
  for (const name of ['event', 'target'] as const) {
    const value: unknown = filter[name];
    if (value !== undefined && typeof value !== 'string')
      throw new ControlError(400, 'bad_request', `${name} must be text, got ${JSON.stringify(value)}`);
  }
  for (const name of ['since', 'limit'] as const) {
    const value: unknown = filter[name];
    if (value !== undefined && !(typeof value === 'number' && Number.isSafeInteger(value) && value >= 0))
      throw new ControlError(400, 'bad_request', `${name} must be a whole number, got ${JSON.stringify(value)}`);
  }
}

/** The filter of `GET /__mockapi/webhooks/deliveries`: `event`, `target`, `status`, `since`, `limit`. */
export function readDeliveryFilter(query: URLSearchParams): DeliveryFilter {
  const filter: DeliveryFilter = {};
  const event = query.get('event');
  const target = query.get('target');
  const status = query.get('status');
  if (event !== null) filter.event = event;
  if (target !== null) filter.target = target;
  if (status !== null) filter.status = status as DeliveryStatus;
  checkDeliveryFilter(filter);
  for (const name of ['since', 'limit'] as const) {
    const value = query.get(name);
    if (value === null) continue;
    const text = name === 'since' ? value.replace(/^whd_/, '') : value;
    if (!/^\d+$/.test(text))
      throw new ControlError(400, 'bad_request', `${name} must be a whole number, got ${JSON.stringify(value)}`);
    filter[name] = Number(text);
  }
  return filter;
}

/** The event, target and data of a trigger's body (`POST /__mockapi/webhooks/trigger`). */
export function readTrigger(body: Record<string, unknown>): TriggerInput {
  if (typeof body.event !== 'string' || typeof body.to !== 'string')
    throw new ControlError(400, 'bad_request', 'the body must be {"event": "<event>", "to": "<target>", "data": {…}}');
  return { event: body.event, to: body.to, data: body.data };
}
