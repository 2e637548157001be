/**
 * The loaded config ({@link Config}): every field validated and its defaults applied, immutable
 * once built — the types the rest of the code reads. Answers are in types-answers.ts, limits and
 * named keys in types-limits.ts, upstream and recording in types-upstream.ts (re-exported here,
 * where the rest of the code imports them from), as webhooks, resources and verify have theirs.
 */
import type { WebhooksConfig } from './types-webhooks.js';
import type { VerifyExample, VerifySettings } from './types-verify.js';
import type { IdempotencyConfig, ResourcesConfig } from './types-resources.js';
import type { DelayShape } from './units.js';

import type { AnswerList, FaultConfig, ResponseConfig } from './types-answers.js';
import type { LimitsConfig, NamedKeyConfig, ProviderHeaderStyle, RateLimitConfig } from './types-limits.js';
import type { RecordingConfig, UpstreamConfig } from './types-upstream.js';

export type {
  AnswerItem,
  AnswerItemFields,
  AnswerKind,
  AnswerList,
  FaultConfig,
  FaultKind,
  ResponseConfig,
} from './types-answers.js';
export {
  DEFAULT_KEY_NAME,
  METER_SCALE,
  type LimitHeaderStyle,
  type LimitsConfig,
  type MeterConfig,
  type NamedKeyConfig,
  type ProviderHeaderStyle,
  type RateLimitConfig,
} from './types-limits.js';
export type { RecordingConfig, UpstreamConfig } from './types-upstream.js';
/** HTTP methods an endpoint may be configured for (upper case once loaded). */
export const HTTP_METHODS = ['GET', 'POST', 'PUT', 'PATCH', 'DELETE', 'HEAD', 'OPTIONS'] as const;
export type HttpMethod = (typeof HTTP_METHODS)[number];

// DelayShape lives in units.ts (a leaf), so types-webhooks.ts can name it without a circle.
export type { DelayShape };

export interface EndpointConfig {
  method: HttpMethod;
  /** As written in the config, e.g. `/users/:id` or `/files/*`. */
  path: string;
  /** Probability 0–1 of answering with the simulated 500. */
  failRate: number;
  /** Milliseconds to wait before answering (0 when `delayShape` gives the delay). */
  delayMs: number;
  /** `delay: { min, max }` or `{ median, p99 }`: drawn per request. */
  delayShape?: DelayShape;
  /** The endpoint's network faults. */
  faults?: FaultConfig[];
  /** The plain `response:` (or the default 200 when the endpoint has none and no `answers`). */
  response: ResponseConfig;
  /** The endpoint's `responses`, `sequence` or `pick`, when it has one instead of `response`. */
  answers?: AnswerList;
  /** `${…}` whose value seeds the answer's random values in place of the request number. */
  seedBy?: string;
  /** `limits.rateLimit` of this endpoint: a window per key, on top of the key's plan. */
  rateLimit?: RateLimitConfig;
  /** The OpenAPI operation (`POST /v1/charges`) the endpoint was imported from and is validated against. */
  openapi?: string;
  /** `openapiSpec:`: absolute path of the description `openapi` names an operation of (the import writes it). */
  openapiSpec?: string;
  /** `validate:`: this endpoint's request validation, over `openapi.validate.requests`. */
  validate?: ValidateMode;
  /** `errors.simulatedFailure` of this endpoint, replacing the config's. */
  simulatedFailure?: ErrorTemplateConfig;
  /** `verify:`: the examples `mockapi verify` sends; empty for `verify: false`. */
  verify?: VerifyExample[];
  /** `cost:`: what a request costs on the meters of its key's limits, by meter, in the order written. */
  cost?: CostConfig[];
}

/** One meter's cost of an endpoint: numbers, or `${…}` text (compiled by src/answer/cost.ts). */
export interface CostConfig {
  meter: string;
  /** Charged at admission; absent: nothing is reserved and `settle` is charged after the answer. */
  reserve?: number | string;
  /** Charged after the answer (corrects the reserve); absent: the reserve stands. */
  settle?: number | string;
}

/** How requests are checked against the OpenAPI description. */
export type ValidateMode = 'report' | 'enforce' | 'off';

/** `openapi:`: the description requests are validated against. */
export interface OpenApiConfig {
  /** Absolute path of the description (resolved against the config file's folder). */
  spec: string;
  /** `validate.requests`; `report` by default. */
  requests: ValidateMode;
  /** `validate.answer`: what `enforce` answers, when given. */
  answer?: ResponseConfig;
}

export interface ServerConfig {
  port: number;
  host: string;
  cors: boolean;
  maxBodySize: number;
  /** Requests kept in the request journal; 0 = no journal. */
  journal: number;
  /** `server.basePath`, without a trailing `/`: `/mock` (also when absent), `` (empty) for `/`. */
  basePath?: string;
  /** `server.https`: also serve over TLS; absent = HTTP only. */
  https?: HttpsConfig;
  /** `server.headers`: headers every answer carries, name to value (`${…}` allowed); absent when none. */
  headers?: Readonly<Record<string, string>>;
}

/** One place a key may come from (`auth.accept`). */
export type AuthSource =
  | { kind: 'x-api-key' }
  | { kind: 'bearer' }
  | { kind: 'basic' }
  | { kind: 'header'; name: string }
  | { kind: 'query'; name: string }
  | { kind: 'scheme'; name: string }
  | { kind: 'cookie'; name: string };

/** The kinds of mockapi's own answers that `errors:` may reshape. */
export const ERROR_KINDS = [
  'missingKey',
  'invalidKey',
  'notFound',
  'rateLimited',
  'quotaExceeded',
  'insufficientQuota',
  'simulatedFailure',
  'storeUnavailable',
  'payloadTooLarge',
  'badRequest',
  'upstreamUnreachable',
  'upstreamTimeout',
] as const;
export type ErrorKind = (typeof ERROR_KINDS)[number];

/** One reshaped answer of `errors:`: what is absent keeps its default. */
export interface ErrorTemplateConfig {
  status?: number;
  headers: Record<string, string>;
  /** Present when `body` was given (it may be null). */
  body?: unknown;
  hasBody: boolean;
}

/** `server.https`, with paths absolute and defaults applied. */
export interface HttpsConfig {
  port: number;
  /** A certificate file of the user's own, with `key`; absent = the project's CA signs one at each start. */
  cert?: string;
  key?: string;
  /** Names the generated certificate is valid for besides localhost, 127.0.0.1, ::1 and the bound host. */
  hosts: string[];
}

/** A validated config with every default applied. Immutable once built. */
export interface Config {
  /** Absolute path of the config file, or undefined for a config given as an object. */
  file?: string;
  /** Folder that relative paths (bodyFile, state) are resolved against. */
  dir: string;
  project: string;
  apiKey: string;
  /** `keys:`, when the config lists any. */
  keys?: NamedKeyConfig[];
  server: ServerConfig;
  seed?: number;
  limits: LimitsConfig;
  /** `limitHeaders:`, as a list without repeats; absent = `limits.headers` decides (and meters are described with `ietf`). */
  limitHeaders?: ProviderHeaderStyle[];
  /** `auth.accept`; absent = the default `[x-api-key, bearer, basic]`. */
  authAccept?: AuthSource[];
  /** `errors:`: the reshaped answers (absent kinds keep their default). */
  errors?: Partial<Record<ErrorKind, ErrorTemplateConfig>>;
  endpoints: EndpointConfig[];
  /** `openapi:`: request validation against a description, when set. */
  openapi?: OpenApiConfig;
  /** Declared scenarios and their initial states. */
  scenarios: Record<string, { initial: string }>;
  /** `webhooks:` (targets and event templates), when configured. */
  webhooks?: WebhooksConfig;
  /** sha256 hex of the config file's bytes (or of the canonical JSON for an object config). */
  revision: string;
  /** `upstream:`, when configured. */
  upstream?: UpstreamConfig;
  /** `recording:` with its defaults; absent on configs built before it existed. */
  recording?: RecordingConfig;
  /** `resources:`: collections of objects that remember, when configured. */
  resources?: ResourcesConfig;
  /** `idempotency:`: on by default with `resources:`, absent when off. */
  idempotency?: IdempotencyConfig;
  /** `verify:`: settings of `mockapi verify`, when given. */
  verify?: VerifySettings;
  /** `sessions:`, when given (src/sessions/settings.ts fills the defaults of an absent one). */
  sessions?: SessionsConfig;
  /** `fleet:`: the Redis a fleet of hosts shares (src/fleet/), when configured. */
  fleet?: FleetConfig;
}

/** `fleet:`: `store` as written, and the URL it named in the environment the config was loaded in. */
export interface FleetConfig {
  /** As written: a URL, or `${env.MOCKAPI_*}` references. */
  store: string;
  /** The URL it reads; empty when an environment variable it needs is not set (the server then runs alone). */
  url: string;
  /** The variables it reads that were not set. */
  missing: string[];
}

/** `sessions:`: named sessions, each with its own stubs, journal, clock and limits. */
export interface SessionsConfig {
  /** `POST /__mockapi/sessions` makes a key valid in that session alone, and a request with it is in it. Default false. */
  byKey?: boolean;
  /** Named sessions at once. Default 10,000. */
  max?: number;
  /** A session idle this long (ms) is dropped. Default 1 h. */
  ttlMs?: number;
}

/** One problem found in a config file. `path` is the field, e.g. `endpoints[1].failRate`. */
export interface ConfigIssue {
  file: string;
  line: number;
  column: number;
  path: string;
  message: string;
}

export type LoadResult = { ok: true; config: Config } | { ok: false; issues: ConfigIssue[] };
