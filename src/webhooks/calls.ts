import type { Delivery, DeliveryFilter } from './log.js';
import type { TargetInfo, TriggerInput, WebhookService } from './service.js';
import { DeliveryWaitTimeout } from './wait-timeout.js';
import { ControlError } from '../control/control-error.js';
import { jsonBody, readWaitOptions } from '../control/call-input.js';
import { readDeliveryFilter, readTrigger } from './delivery-filter.js';

/** The webhook calls of a server (`server.webhooks`, and `connectMockServer(url).webhooks`), as the admin API has them. */
export interface WebhookCalls {
  /** The targets, their secrets as fingerprints, with pending, delivered and failed counts. */
  targets(): Promise<TargetInfo[]>;
  /** The delivery log, oldest first. */
  deliveries(filter?: DeliveryFilter): Promise<Delivery[]>;
  /** Resolves once `count` (default 1) deliveries match `filter`; rejects after `timeout` (default 5 s) naming those that did. */
  waitFor(filter?: DeliveryFilter, options?: { count?: number; timeout?: number | string }): Promise<Delivery[]>;
  /** Sends an event of `webhooks.events` to a target now, its `data` laid over the template's. */
  trigger(input: TriggerInput): Promise<Delivery>;
  /** Sends a logged delivery again (same event id, signed anew). */
  replay(id: string): Promise<Delivery>;
}

/**
 * The calls over the server's own service, for the default session (as the admin API without
 * `?session=`). A filter, a wait's options and a trigger are read as the admin API reads what
 * `connectMockServer` sends: the same 400 for a wrong one. When `stopping` aborts (the server
 * stops), a wait still pending rejects with the 503 `stopping` a wait over HTTP gets.
 */
export function webhookCalls(service: WebhookService, stopping?: AbortSignal): WebhookCalls {
  const filterOf = (filter?: DeliveryFilter) => readDeliveryFilter(new URLSearchParams(query(filter)));
  return {
    targets: async () => service.targets(),
    deliveries: async (filter) => service.deliveries({ ...filterOf(filter), session: '' }),
    waitFor: async (filter, options = {}) => {
      const params = new URLSearchParams(query(filter, { count: options.count, timeout: options.timeout }));
      const read = { ...readDeliveryFilter(params), session: '' };
      const { count, timeout } = readWaitOptions(params);
      return service.waitFor(read, { count: count ?? 1, timeout }, stopping).catch((err: unknown) => {
        if (stopping?.aborted === true && err instanceof ControlError && err.code === 'aborted')
          throw new ControlError(503, 'stopping', 'the server is stopping');
        throw err;
      });
    },
    trigger: async (input) => service.trigger({ ...readTrigger(jsonBody(input)), session: '' }),
    replay: async (id) => service.replay(id, ''),
  };
}

type Call = <T>(method: string, path: string, body?: unknown, timeoutMs?: number) => Promise<T>;

function query(filter: DeliveryFilter = {}, extra: Record<string, string | number | undefined> = {}): string {
  const params = new URLSearchParams();
  for (const [name, value] of Object.entries({ ...filter, ...extra }))
    if (value !== undefined) params.set(name, String(value));
  const text = params.toString();
  return text === '' ? '' : `?${text}`;
}

/** The calls over the admin API (`connectMockServer`); `call` throws a ControlError for a status other than 2xx but 408. */
export function httpWebhookCalls(call: Call): WebhookCalls {
  return {
    targets: async () => (await call<{ targets: TargetInfo[] }>('GET', 'webhooks')).targets,
    deliveries: async (filter) =>
      (await call<{ deliveries: Delivery[] }>('GET', `webhooks/deliveries${query(filter)}`)).deliveries,
    async waitFor(filter, options = {}) {
      const answer = await call<{ deliveries: Delivery[]; error?: string; message?: string }>(
        'GET',
        `webhooks/deliveries/wait${query(filter, { count: options.count, timeout: options.timeout })}`,
        undefined,
        70_000,
      );
      if (answer.error === 'timeout') throw new DeliveryWaitTimeout(String(answer.message), answer.deliveries);
      return answer.deliveries;
    },
    trigger: (input) => call<Delivery>('POST', 'webhooks/trigger', input),
    replay: (id) => call<Delivery>('POST', `webhooks/deliveries/${encodeURIComponent(id)}/replay`),
  };
}
