import type { ChaosConfig, SendConfig, SignConfig, WebhookTargetConfig, WebhooksConfig } from './types-webhooks.js';
import { delayShape, parseDuration, parseFailRate } from './units.js';

type Obj = Record<string, unknown>;

/** Retry waits of `retry.schedule: standard` (the Standard Webhooks recommendation). */
export const STANDARD_SCHEDULE_MS = [5_000, 300_000, 1_800_000, 7_200_000, 18_000_000, 36_000_000, 36_000_000];
/** Waits when a target gives no schedule. */
export const DEFAULT_SCHEDULE_MS = [1_000, 5_000, 30_000, 120_000];
/** How long one attempt may take when a target gives no `retry.timeout`. */
export const DEFAULT_WEBHOOK_TIMEOUT_MS = 10_000;

const obj = (v: unknown): Obj => (v !== null && typeof v === 'object' && !Array.isArray(v) ? (v as Obj) : {});
const rate = (v: unknown): number => (v === undefined ? 0 : (parseFailRate(v) ?? 0));

function buildSign(raw: Obj): SignConfig {
  return {
    scheme: (raw.scheme as SignConfig['scheme'] | undefined) ?? 'none',
    secret: typeof raw.secret === 'string' ? raw.secret : '',
    header: typeof raw.header === 'string' ? raw.header : 'X-Signature',
    algorithm: (raw.algorithm as SignConfig['algorithm'] | undefined) ?? 'sha256',
    encoding: (raw.encoding as SignConfig['encoding'] | undefined) ?? 'hex',
    template: typeof raw.template === 'string' ? raw.template : '${body}',
    prefix: typeof raw.prefix === 'string' ? raw.prefix : '',
  };
}

function buildTarget(raw: Obj): WebhookTargetConfig {
  const retry = obj(raw.retry);
  const chaos = obj(raw.chaos);
  const schedule = retry.schedule;
  return {
    url: raw.url as string,
    sign: buildSign(obj(raw.sign)),
    scheduleMs:
      schedule === 'none'
        ? []
        : schedule === 'standard'
          ? STANDARD_SCHEDULE_MS
          : Array.isArray(schedule)
            ? schedule.map((d) => parseDuration(d) as number)
            : DEFAULT_SCHEDULE_MS,
    timeoutMs: retry.timeout === undefined ? DEFAULT_WEBHOOK_TIMEOUT_MS : (parseDuration(retry.timeout) as number),
    chaos: {
      duplicate: rate(chaos.duplicate),
      reorder: rate(chaos.reorder),
      badSignature: rate(chaos.badSignature),
      staleTimestamp: rate(chaos.staleTimestamp),
    } satisfies ChaosConfig,
    disabled: raw.disabled === true,
  };
}

/** `webhooks:` of validated data, defaults applied; undefined when absent. */
export function buildWebhooks(raw: unknown): WebhooksConfig | undefined {
  if (raw === undefined || raw === null) return undefined;
  const section = obj(raw);
  const targets = Object.fromEntries(
    Object.entries(obj(section.targets)).map(([name, t]) => [name, buildTarget(obj(t))]),
  );
  const events = Object.fromEntries(
    Object.entries(obj(section.events)).map(([name, e]) => {
      const event = obj(e);
      return [
        name,
        {
          envelope: (event.envelope as WebhooksConfig['events'][string]['envelope'] | undefined) ?? 'none',
          ...(Object.hasOwn(event, 'data') ? { data: event.data } : {}),
        },
      ];
    }),
  );
  return { targets, events };
}

/** A leaf's `send:` of validated data. */
export function buildSend(raw: unknown): SendConfig[] | undefined {
  if (!Array.isArray(raw) || raw.length === 0) return undefined;
  return raw.map((item) => {
    const s = obj(item);
    const send: SendConfig = { event: s.event as string, to: s.to as string, afterMs: 0 };
    if (typeof s.url === 'string') send.url = s.url;
    if (s.after !== undefined && typeof s.after === 'object' && s.after !== null)
      send.afterShape = delayShape(obj(s.after));
    else if (s.after !== undefined) send.afterMs = parseDuration(s.after) as number;
    if (Object.hasOwn(s, 'data')) send.data = s.data;
    return send;
  });
}
