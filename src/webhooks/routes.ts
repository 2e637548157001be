import type { IncomingMessage } from 'node:http';
import { AdminAnswer, type RouteTable } from '../control/admin-api.js';
import { readJsonBody } from '../control/admin-input.js';
import { ControlError } from '../control/control-error.js';
import { readDeliveryFilter, readTrigger } from './delivery-filter.js';
import { readWaitOptions } from '../control/call-input.js';
import { DeliveryWaitTimeout, type WebhookService } from './service.js';

/** The delivery waits open, by session: a session with one is in use (not idle), and one dropped ends them. */
export interface WebhookWaits {
  /** Registers a wait of `session`; `stop(reason)` ends it. Returns its removal. */
  add(session: string, stop: (reason: string) => void): () => void;
  /** How many waits `session` has open. */
  opened(session: string): number;
  /** Ends the waits of a dropped session with 410 `session_dropped` and `message`. */
  closeSession(session: string, message: string): void;
}

export function createWebhookWaits(): WebhookWaits {
  const open = new Map<string, Set<(reason: string) => void>>();
  return {
    add(session, stop) {
      let set = open.get(session);
      if (set === undefined) open.set(session, (set = new Set()));
      set.add(stop);
      return () => {
        set.delete(stop);
        if (set.size === 0 && open.get(session) === set) open.delete(session);
      };
    },
    opened: (session) => open.get(session)?.size ?? 0,
    closeSession(session, message) {
      for (const stop of [...(open.get(session) ?? [])]) stop(message);
    },
  };
}

/**
 * The admin routes of webhooks: `GET /__mockapi/webhooks` (targets and counts),
 * `GET …/deliveries`, `GET …/deliveries/wait`, `POST …/deliveries/<id>/replay`, `POST …/trigger`,
 * `PUT …/targets/<name>`.
 */
export function webhookRoutes(service: WebhookService, waits: WebhookWaits = createWebhookWaits()): RouteTable {
  async function waitRoute(req: IncomingMessage, query: URLSearchParams, session: string): Promise<unknown> {
    const filter = { ...readDeliveryFilter(query), session };
    const { count, timeout } = readWaitOptions(query);
    const abort = new AbortController();
    let dropped: string | undefined;
    const stop = (reason?: string): void => {
      dropped = reason;
      abort.abort();
    };
    const gone = (): void => stop();
    req.socket.once('close', gone);
    const done = waits.add(session, stop);
    try {
      const deliveries = await service.waitFor(filter, { count: count ?? 1, timeout }, abort.signal);
      return { deliveries };
    } catch (err) {
      if (err instanceof DeliveryWaitTimeout)
        return new AdminAnswer(408, { error: 'timeout', message: err.message, deliveries: err.deliveries });
      if (dropped !== undefined) throw new ControlError(410, 'session_dropped', dropped);
      throw err;
    } finally {
      done();
      req.socket.removeListener('close', gone);
    }
  }

  return {
    webhooks: { GET: () => ({ targets: service.targets() }) },
    // The deliveries of the session the call names (its requests', objects' and triggers'), no other's.
    'webhooks/deliveries': {
      GET: (_req, _res, query, _rest, s) => ({
        deliveries: service.deliveries({ ...readDeliveryFilter(query), session: s.id }),
      }),
    },
    'webhooks/deliveries/wait': {
      GET: (req, _res, query, _rest, s) => {
        void s.plane; // a named session is made (and marked seen) by a wait, as by a journal wait: it can then be listed, dropped, kept in use
        return waitRoute(req, query, s.id);
      },
    },
    'webhooks/trigger': {
      POST: async (req, _res, _query, _rest, s) => {
        const input = readTrigger(await readJsonBody(req));
        return new AdminAnswer(201, service.trigger({ ...input, session: s.id }));
      },
    },
    'webhooks/*': {
      POST: (_req, _res, _query, rest, s) => {
        const match = /^deliveries\/([^/]+)\/replay$/.exec(rest);
        if (match === null) throw new ControlError(404, 'not_found', `No admin call POST /__mockapi/webhooks/${rest}`);
        return new AdminAnswer(201, service.replay(match[1] as string, s.id));
      },
      PUT: async (req, _res, _query, rest) => {
        const match = /^targets\/([^/]+)$/.exec(rest);
        if (match === null) throw new ControlError(404, 'not_found', `No admin call PUT /__mockapi/webhooks/${rest}`);
        const body = await readJsonBody(req);
        const change: { url?: string; disabled?: boolean } = {};
        for (const [key, value] of Object.entries(body)) {
          if (key === 'url' && typeof value === 'string' && /^https?:\/\//.test(value)) change.url = value;
          else if (key === 'disabled' && typeof value === 'boolean') change.disabled = value;
          else
            throw new ControlError(
              400,
              'bad_request',
              'the body takes "url" (an http:// or https:// URL) and "disabled" (true or false)',
            );
        }
        return service.setTarget(match[1] as string, change);
      },
    },
  };
}
