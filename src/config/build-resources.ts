import type { ErrorTemplateConfig } from './types.js';
import { parseDuration } from './units.js';
import {
  DEFAULT_IDEMPOTENCY_HEADER,
  DEFAULT_IDEMPOTENCY_TTL_MS,
  DEFAULT_STATUS_FIELD,
  type IdempotencyConfig,
  type ResourceActionConfig,
  type ResourceConfig,
  type ResourceMoveConfig,
  type ResourcesConfig,
  type ResourceSendConfig,
  type ResourceStyle,
} from './types-resources.js';

type Obj = Record<string, unknown>;

const obj = (v: unknown): Obj => (v !== null && typeof v === 'object' && !Array.isArray(v) ? (v as Obj) : {});
/** A fresh copy of a mapping's entries: a key named `__proto__` stays an ordinary entry. */
const entries = (v: unknown): Obj => Object.fromEntries(Object.entries(obj(v)));

/** The keys of `resources:` that are settings, not collections. */
export const RESOURCE_SETTINGS = ['persist'] as const;

function buildSend(raw: unknown): ResourceSendConfig[] {
  if (!Array.isArray(raw)) return [];
  return raw.map((item) => {
    if (typeof item === 'string') return { event: item, afterMs: 0, hasData: false };
    const s = obj(item);
    const send: ResourceSendConfig = {
      event: String(s.event),
      afterMs: s.after === undefined ? 0 : (parseDuration(s.after) as number),
      hasData: Object.hasOwn(s, 'data'),
    };
    if (typeof s.to === 'string') send.to = s.to;
    if (send.hasData) send.data = s.data;
    return send;
  });
}

function buildAction(name: string, raw: unknown): ResourceActionConfig {
  const a = obj(raw);
  const action: ResourceActionConfig = { name, set: entries(a.set), send: buildSend(a.send) };
  if (a.when !== null && typeof a.when === 'object') action.when = entries(a.when);
  return action;
}

function buildMove(raw: unknown): ResourceMoveConfig {
  const m = obj(raw);
  const move: ResourceMoveConfig = {
    from: String(m.from),
    afterMs: parseDuration(m.after) as number,
    to: typeof m.to === 'string' ? m.to : (entries(m.to) as Record<string, number>),
    set: entries(m.set),
    send: buildSend(m.send),
    field: typeof m.field === 'string' ? m.field : DEFAULT_STATUS_FIELD,
  };
  if (m.when !== null && typeof m.when === 'object') move.when = entries(m.when);
  return move;
}

function buildNotFound(raw: unknown): ErrorTemplateConfig | undefined {
  const notFound = obj(raw).notFound;
  if (notFound === undefined || notFound === null) return undefined;
  const t = obj(notFound);
  const template: ErrorTemplateConfig = {
    headers: entries(t.headers) as Record<string, string>,
    hasBody: Object.hasOwn(t, 'body'),
  };
  if (typeof t.status === 'number') template.status = t.status;
  if (template.hasBody) template.body = t.body;
  return template;
}

function buildResource(name: string, raw: Obj): ResourceConfig {
  const resource: ResourceConfig = {
    name,
    style: raw.style as ResourceStyle,
    path: raw.path as string,
    fields: entries(raw.fields),
    seed: Array.isArray(raw.seed) ? raw.seed.map((item) => entries(item)) : [],
    actions: Object.entries(obj(raw.actions)).map(([action, spec]) => buildAction(action, spec)),
    lifecycle: Array.isArray(raw.lifecycle) ? raw.lifecycle.map(buildMove) : [],
  };
  if (typeof raw.id === 'string') resource.id = raw.id;
  const notFound = buildNotFound(raw.errors);
  if (notFound !== undefined) resource.notFound = notFound;
  return resource;
}

/** `resources:` of validated data, defaults applied; undefined when absent or without a collection. */
export function buildResources(raw: unknown): ResourcesConfig | undefined {
  const section = obj(raw);
  const collections = Object.entries(section)
    .filter(
      ([name, value]) =>
        !(RESOURCE_SETTINGS as readonly string[]).includes(name) && value !== null && typeof value === 'object',
    )
    .map(([name, value]) => buildResource(name, value as Obj));
  if (collections.length === 0 && section.persist !== true) return undefined;
  return { collections, persist: section.persist === true };
}

/** `idempotency:` of validated data: on by default when the config has collections, on with `true` or a mapping, off with `false`. */
export function buildIdempotency(raw: unknown, hasResources: boolean): IdempotencyConfig | undefined {
  if (raw === false || (raw === undefined && !hasResources)) return undefined;
  const i = obj(raw);
  return {
    header: (typeof i.header === 'string' ? i.header : DEFAULT_IDEMPOTENCY_HEADER).toLowerCase(),
    ttlMs: i.ttl === undefined ? DEFAULT_IDEMPOTENCY_TTL_MS : (parseDuration(i.ttl) as number),
  };
}
