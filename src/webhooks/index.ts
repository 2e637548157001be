import type { RouteTable } from '../control/admin-api.js';
import type { ControlPlane } from '../control/control-plane.js';
import type { Logger } from '../logger.js';
import type { Delivery, DeliveryFilter } from './log.js';
import { webhookRoutes as routesOf } from './routes.js';
import type { TargetInfo, TriggerInput, WebhookService } from './service.js';

export { createWebhookService, DeliveryWaitTimeout, type WebhookService, type TargetInfo, type TriggerInput } from './service.js';
export type { Delivery, DeliveryAttempt, DeliveryFilter, DeliveryStatus } from './log.js';

/** The programmatic webhook calls of a server (`server.webhooks`), as the admin API has them. */
export interface WebhookCalls {
  /** The targets, their secrets as fingerprints, with pending, delivered and failed counts. */
  targets(): TargetInfo[];
  /** The delivery log, oldest first. */
  deliveries(filter?: DeliveryFilter): Delivery[];
  /** Waits until `count` (default 1) deliveries match `filter`; rejects after `timeout` (default 5 s). */
  waitFor(filter?: DeliveryFilter, options?: { count?: number; timeout?: number | string }): Promise<Delivery[]>;
  /** Sends an event of `webhooks.events` to a target now. */
  trigger(input: TriggerInput): Delivery;
  /** Sends a logged delivery again (same event id, signed anew). */
  replay(id: string): Delivery;
}

/** The calls of {@link WebhookCalls} over a service. */
export function webhookCalls(service: WebhookService): WebhookCalls {
  return {
    targets: () => service.targets(),
    deliveries: (filter) => service.deliveries(filter),
    waitFor: (filter = {}, options) => service.waitFor(filter, options),
    trigger: (input) => service.trigger(input),
    replay: (id) => service.replay(id),
  };
}

/** The admin routes, and the `webhook` event on the control plane's event stream. */
export function webhookRoutes(service: WebhookService, plane: ControlPlane): RouteTable {
  service.listen((delivery) => plane.publish({ type: 'webhook', data: delivery }));
  return routesOf(service);
}

/** At stop: waits up to `drainMs` for pending deliveries, says on the logger how many are left, and lets go of every timer and socket. */
export async function stopWebhooks(service: WebhookService, drainMs: number, logger: Logger): Promise<void> {
  if (service.pending() > 0 && drainMs > 0) await service.drain(drainMs);
  const left = service.pending();
  service.close();
  if (left > 0) logger.warn(`${left} webhook deliver${left === 1 ? 'y was' : 'ies were'} still pending at stop and will not be sent${drainMs > 0 ? '' : ' (serve --drain-webhooks <duration> waits for them)'}`);
}
