import type { ConfigHolder } from '../answer/config-runtime.js';
import type { RequestContext } from '../expression/context.js';
import type { RenderedAnswer } from '../answer/leaf.js';
import type { Clock } from '../clock.js';
import { ControlError } from '../control/control-error.js';
import { DEFAULT_WAIT_MS, MAX_WAIT_MS, parseSpan } from '../control/wait.js';
import { createDrawStreams } from '../seeded.js';
import { shapeDelay } from '../pipeline/resilience.js';
import { emptyContext, type CompiledSend } from './compile.js';
import {
  createDispatcher,
  type Dispatcher,
  type DispatcherOptions,
  type OutgoingEvent,
  type TargetOverride,
} from './dispatcher.js';
import type { HeldDelivery } from './held.js';
import { matchesDelivery, type Delivery, type DeliveryFilter } from './log.js';
import { mergeData, prepareSends, responseValue, type PreparedSend } from './prepare.js';
import { fingerprint } from './sign.js';
import { DeliveryWaitTimeout } from './wait-timeout.js';
import { closestDeliveries, describeDeliveryFilter } from './wait-miss.js';
import { checkDeliveryFilter } from './delivery-filter.js';
import { MAX_FORM_DEPTH } from '../resources/form.js';

export { DeliveryWaitTimeout };

/** A target as `GET /__mockapi/webhooks` shows it: the secret as a fingerprint only. */
export interface TargetInfo {
  name: string;
  url: string;
  scheme: string;
  secret: string;
  disabled: boolean;
  pending: number;
  delivered: number;
  failed: number;
}

/** What `trigger` takes: an event of `webhooks.events`, a target, and data laid over the template's. */
export interface TriggerInput {
  event: string;
  to: string;
  data?: unknown;
  /** The session the admin call named (`''`: the default one). */
  session?: string;
}

/** The webhooks of one server: what answers fire, the admin calls and the programmatic ones. */
export interface WebhookService {
  /** Evaluates an answer's `send` (on arrival, with the request). */
  prepare(
    sends: readonly CompiledSend[],
    ctx: RequestContext,
    rendered: RenderedAnswer,
    endpoint: string,
    session?: string,
  ): PreparedSend[];
  /** Sends what `prepare` made, once the answer is sent; returns the journal notes naming the deliveries. */
  fire(prepared: readonly PreparedSend[]): string[];
  trigger(input: TriggerInput): Delivery;
  /** Sends an event made elsewhere (a resource's action or lifecycle move) to one target after `afterMs` (server clock); returns the journal note. */
  emit(event: OutgoingEvent, afterMs: number): string;
  targets(): TargetInfo[];
  deliveries(filter?: DeliveryFilter): Delivery[];
  waitFor(
    filter: DeliveryFilter,
    options?: { count?: number; timeout?: number | string },
    signal?: AbortSignal,
  ): Promise<Delivery[]>;
  /** Sends a delivery of the log again; `session`: only one of that session's (else 404). */
  replay(id: string, session?: string): Delivery;
  setTarget(name: string, change: TargetOverride): TargetInfo;
  /** Told of every change to a delivery (the `webhook` event), as shown (secrets scrubbed). */
  listen(listener: (delivery: Delivery) => void): () => void;
  /** Told of every change to a delivery as it is held: pass it through `show` before it leaves the server. */
  listenRaw(listener: (delivery: HeldDelivery) => void): () => void;
  /** A delivery as shown: a copy with every secret the server knows scrubbed. */
  show(delivery: HeldDelivery): Delivery;
  clockMoved(): void;
  pending(): number;
  drain(ms: number): Promise<boolean>;
  close(): void;
}

export interface WebhookServiceOptions {
  holder: ConfigHolder;
  clock: Clock;
  realClock?: Clock;
  seed: () => number;
  /** Makes the attempts (default: the delivery thread); benches and tests hand in their own. */
  sender?: DispatcherOptions['sender'];
}

/** Builds the webhook service of a server. */
export function createWebhookService(options: WebhookServiceOptions): WebhookService {
  const { holder, clock } = options;
  const listeners = new Set<(delivery: HeldDelivery) => void>();
  const dispatcher: Dispatcher = createDispatcher({
    clock,
    ...(options.realClock === undefined ? {} : { realClock: options.realClock }),
    ...(options.sender === undefined ? {} : { sender: options.sender }),
    seed: options.seed,
    target: (name) => holder.current.webhooks?.targets.get(name),
    capacity: () => holder.current.config.server.journal || 1000,
    onChange: (delivery) => listeners.forEach((listener) => listener(delivery)),
  });
  /** A delivery as shown: every secret the server knows scrubbed from it (a request's data may carry one). */
  const shown = (delivery: HeldDelivery): Delivery =>
    JSON.parse(holder.current.redactor.scrub(JSON.stringify(delivery))) as Delivery;
  let afterStreams = { seed: NaN, draws: createDrawStreams(0) };
  let triggers = 0;

  function afterMs(send: CompiledSend): number {
    if (send.afterShape === undefined) return send.afterMs;
    const seed = options.seed();
    if (afterStreams.seed !== seed) afterStreams = { seed, draws: createDrawStreams(seed) };
    return shapeDelay(send.afterShape, afterStreams.draws.next(`webhook after ${send.event} ${send.to}`));
  }

  function info(name: string): TargetInfo {
    const target = holder.current.webhooks?.targets.get(name);
    if (target === undefined) throw new ControlError(404, 'not_found', `no webhook target named "${name}"`);
    const override = dispatcher.overrides().get(name);
    const counts = dispatcher.counts().get(name) ?? { pending: 0, delivered: 0, failed: 0 };
    return {
      name,
      url: override?.url ?? target.url,
      scheme: target.sign.scheme,
      secret: fingerprint(target.sign.secret),
      disabled: override?.disabled ?? target.disabled,
      ...counts,
    };
  }

  return {
    prepare: (sends, ctx, rendered, endpoint, session) =>
      prepareSends(holder.current.webhooks, sends, ctx, () => responseValue(rendered), endpoint, session),
    fire(prepared) {
      return prepared.map((item) => {
        if ('problem' in item) return item.problem;
        const delivery = dispatcher.send(item.event, afterMs(item.send));
        return `webhook ${delivery.event} → ${delivery.target}: ${delivery.id}`;
      });
    },
    trigger(input) {
      const webhooks = holder.current.webhooks;
      const template = webhooks?.events.get(input.event);
      if (template === undefined)
        throw new ControlError(404, 'not_found', `no event "${input.event}" under webhooks.events`);
      if (!webhooks?.targets.has(input.to))
        throw new ControlError(404, 'not_found', `no target "${input.to}" under webhooks.targets`);
      if (nestedDeeper(input.data, MAX_FORM_DEPTH))
        throw new ControlError(400, 'bad_request', `data is nested more than ${MAX_FORM_DEPTH} levels deep`);
      const ctx = emptyContext(clock(), options.seed(), ++triggers);
      const data = mergeData(template.data?.evaluate(ctx), input.data);
      return shown(
        dispatcher.send(
          {
            type: input.event,
            envelope: template.envelope,
            data,
            target: input.to,
            endpoint: null,
            session: input.session ?? '',
          },
          0,
        ),
      );
    },
    emit(event, afterMs) {
      const delivery = dispatcher.send(event, afterMs);
      return `webhook ${delivery.event} → ${delivery.target}: ${delivery.id}`;
    },
    targets: () => [...(holder.current.webhooks?.targets.keys() ?? [])].map(info),
    deliveries: (filter) => dispatcher.list(filter).map(shown),
    waitFor(filter, wait = {}, signal) {
      try {
        checkDeliveryFilter(filter);
      } catch (err) {
        return Promise.reject(err as Error);
      }
      const count = wait.count ?? 1;
      const timeout = wait.timeout === undefined ? DEFAULT_WAIT_MS : parseSpan(wait.timeout);
      if (timeout === undefined)
        return Promise.reject(
          new ControlError(
            400,
            'bad_request',
            `timeout must be a duration such as 5s, got ${JSON.stringify(wait.timeout)}`,
          ),
        );
      const found = (): Delivery[] => dispatcher.list({ ...filter, limit: undefined }).map(shown);
      if (found().length >= count) return Promise.resolve(found());
      return new Promise((resolve, reject) => {
        const stop = (): void => {
          clearTimeout(timer);
          listeners.delete(check);
          signal?.removeEventListener('abort', aborted);
        };
        // Counted as held; copied and scrubbed once, when enough match (a busy log changes often).
        const check = (delivery: HeldDelivery): void => {
          if (!matchesDelivery(delivery, filter)) return;
          const now = dispatcher.list({ ...filter, limit: undefined });
          if (now.length < count) return;
          stop();
          resolve(now.map(shown));
        };
        const aborted = (): void => {
          stop();
          reject(new ControlError(503, 'aborted', 'the wait was aborted'));
        };
        const timer = setTimeout(
          () => {
            stop();
            const now = found();
            const what = `${now.length} of ${count} deliver${count === 1 ? 'y' : 'ies'} matching ${describeDeliveryFilter(filter)} came within ${Math.min(timeout, MAX_WAIT_MS)} ms`;
            reject(new DeliveryWaitTimeout(`${what}; ${closestDeliveries(dispatcher.list, filter)}`, now));
          },
          Math.min(timeout, MAX_WAIT_MS),
        );
        timer.unref();
        listeners.add(check);
        signal?.addEventListener('abort', aborted, { once: true });
      });
    },
    replay(id, session) {
      const delivery =
        session === undefined || dispatcher.list({ session }).some((d) => d.id === id)
          ? dispatcher.replay(id)
          : undefined;
      if (delivery === undefined) throw new ControlError(404, 'not_found', `no delivery ${id} in the delivery log`);
      return shown(delivery);
    },
    setTarget(name, change) {
      info(name); // 404 for an unknown target
      dispatcher.override(name, change);
      return info(name);
    },
    show: shown,
    listenRaw(listener) {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
    listen(listener) {
      const told = (delivery: HeldDelivery): void => listener(shown(delivery));
      listeners.add(told);
      return () => listeners.delete(told);
    },
    clockMoved: () => dispatcher.clockMoved(),
    pending: () => dispatcher.pending(),
    drain: (ms) => dispatcher.drain(ms),
    close: () => dispatcher.close(),
  };
}

/**
 * Whether `value` holds lists or mappings more than `levels` deep (`{}` and `[]` are one level):
 * looks no deeper than that, so a value nested thousands deep costs no more than one at the limit.
 */
function nestedDeeper(value: unknown, levels: number): boolean {
  if (value === null || typeof value !== 'object') return false;
  if (levels === 0) return true;
  for (const item of Array.isArray(value) ? value : Object.values(value as object))
    if (nestedDeeper(item, levels - 1)) return true;
  return false;
}
