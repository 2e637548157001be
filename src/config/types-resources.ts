import type { ErrorTemplateConfig } from './types.js';

/** Whose API a collection behaves like: methods, status codes, list shape, pages and error bodies. */
export const RESOURCE_STYLES = ['stripe', 'github', 'openai', 'rest'] as const;
export type ResourceStyle = (typeof RESOURCE_STYLES)[number];

/** One event a change sends (`send:`), defaults applied. */
export interface ResourceSendConfig {
  event: string;
  /** A target under `webhooks.targets`; undefined: every target. */
  to?: string;
  afterMs: number;
  /** The event's data in place of `{ object: <the object> }` (may hold `${…}`). */
  data?: unknown;
  hasData: boolean;
}

/** `actions.<name>`: `POST <path>/:id/<name>`. */
export interface ResourceActionConfig {
  name: string;
  /** Fields set on the object (values may hold `${…}`). */
  set: Record<string, unknown>;
  send: ResourceSendConfig[];
  /** Field path → matcher, as written. */
  when?: Record<string, unknown>;
}

/** One move of `lifecycle:`. */
export interface ResourceMoveConfig {
  from: string;
  afterMs: number;
  /** A status, or weights of several. */
  to: string | Record<string, number>;
  set: Record<string, unknown>;
  send: ResourceSendConfig[];
  when?: Record<string, unknown>;
  /** The field that holds the status (`status`). */
  field: string;
}

/** One collection of `resources:`, defaults applied. */
export interface ResourceConfig {
  name: string;
  style: ResourceStyle;
  /** The collection's path as written (`/v1/customers`, `/repos/:owner/:repo/issues`). */
  path: string;
  /** `id:` as written; undefined: the style's default. */
  id?: string;
  /** Defaults of a created object, as written (values may hold `${…}`). */
  fields: Record<string, unknown>;
  seed: Record<string, unknown>[];
  actions: ResourceActionConfig[];
  lifecycle: ResourceMoveConfig[];
  /** `errors.notFound` of this collection. */
  notFound?: ErrorTemplateConfig;
}

/** `resources:` and `idempotency:`, defaults applied. */
export interface ResourcesConfig {
  collections: ResourceConfig[];
  /** `resources.persist`: objects kept in `.mockapi/resources.json` across restarts. */
  persist: boolean;
}

/** `idempotency:`: on by default with `resources:`. */
export interface IdempotencyConfig {
  /** The header name, lower case. */
  header: string;
  ttlMs: number;
}

/** Default `idempotency.header`. */
export const DEFAULT_IDEMPOTENCY_HEADER = 'Idempotency-Key';
/** Default `idempotency.ttl`: 24 hours, as Stripe keeps keys. */
export const DEFAULT_IDEMPOTENCY_TTL_MS = 24 * 3_600_000;
/** The field that holds an object's status by default. */
export const DEFAULT_STATUS_FIELD = 'status';
