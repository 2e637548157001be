import type { RouteTable } from '../control/admin-api.js';
import type { ControlPlane } from '../control/control-plane.js';
import type { Logger } from '../logger.js';
import { webhookRoutes as routesOf, type WebhookWaits } from './routes.js';
import type { WebhookService } from './service.js';
import type { HeldDelivery } from './held.js';

export {
  createWebhookService,
  DeliveryWaitTimeout,
  type WebhookService,
  type TargetInfo,
  type TriggerInput,
} from './service.js';
export type { Delivery, DeliveryAttempt, DeliveryFilter, DeliveryStatus } from './log.js';

export { webhookCalls, httpWebhookCalls, type WebhookCalls } from './calls.js';
export { createWebhookWaits, type WebhookWaits } from './routes.js';

/** A `webhook` event whose `data` (the delivery scrubbed and copied) is made when first read. */
class WebhookEvent {
  readonly type = 'webhook' as const;
  private shown: unknown;
  constructor(
    private readonly service: WebhookService,
    private readonly delivery: HeldDelivery,
  ) {}

  get data(): unknown {
    return (this.shown ??= this.service.show(this.delivery));
  }
}

/** Where a named session's `webhook` events go (its control plane's event streams); undefined for a session that is gone. */
export type SessionEvents = (session: string) => Pick<ControlPlane, 'publish'> | undefined;

/** The admin routes, and the `webhook` event on the event stream of the session the delivery belongs to. */
export function webhookRoutes(
  service: WebhookService,
  plane: ControlPlane,
  sessions?: SessionEvents,
  waits?: WebhookWaits,
): RouteTable {
  // `data` is read (the delivery scrubbed and copied) only when an event stream is open to write it.
  service.listenRaw((delivery) =>
    (delivery.session === '' ? plane : sessions?.(delivery.session))?.publish(new WebhookEvent(service, delivery)),
  );
  return routesOf(service, waits);
}

/** At stop: waits up to `drainMs` for pending deliveries, says on the logger how many are left, and lets go of every timer and socket. */
export async function stopWebhooks(service: WebhookService, drainMs: number, logger: Logger): Promise<void> {
  if (service.pending() > 0 && drainMs > 0) await service.drain(drainMs);
  const left = service.pending();
  service.close();
  if (left > 0)
    logger.warn(
      `${left} webhook deliver${left === 1 ? 'y was' : 'ies were'} still pending at stop and will not be sent${drainMs > 0 ? '' : ' (serve --drain-webhooks <duration> waits for them)'}`,
    );
}
