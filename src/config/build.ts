/**
 * Building the immutable {@link Config} from data that passed the schema and the rules: every
 * section with its defaults applied — server, limits, keys, scenarios, upstream, recording,
 * sessions and the rest — then frozen. Endpoints and their answers are built in
 * build-endpoints.ts; keys, webhooks, resources, OpenAPI and the look-alike sections in their own
 * build-*.ts files.
 */
import { basename, resolve } from 'node:path';
import { buildMeters, buildNamedKeys } from './build-keys.js';
import type {
  Config,
  HttpsConfig,
  LimitHeaderStyle,
  LimitsConfig,
  ProviderHeaderStyle,
  RecordingConfig,
  ServerConfig,
  SessionsConfig,
  UpstreamConfig,
} from './types.js';
import { buildOpenApi } from './build-openapi.js';
import { parseDuration, parseSize } from './units.js';
import { buildWebhooks } from './build-webhooks.js';
import { buildAuthAccept, buildBasePath, buildErrors } from './build-lookalike.js';
import { buildVerifySettings } from './types-verify.js';
import { buildIdempotency, buildResources } from './build-resources.js';
import { resolveFleetStore } from './fleet.js';
import { buildEndpoints, buildLeaf, freezeDeep } from './build-endpoints.js';

/** The config's defaults (port 4010, host 127.0.0.1, CORS on, 1 MiB bodies). */
export const DEFAULT_PORT = 4010;
export const DEFAULT_HOST = '127.0.0.1';
export const DEFAULT_MAX_BODY_SIZE = 1024 * 1024;
/** Requests kept in the request journal by default. */
export const DEFAULT_JOURNAL_SIZE = 1000;

type Obj = Record<string, unknown>;

/** Optional sections may be absent or left empty (`server:` with nothing under it). */
function section(v: unknown): Obj {
  return v !== null && typeof v === 'object' ? (v as Obj) : {};
}

function buildServer(raw: Obj, dir: string): ServerConfig {
  return {
    port: typeof raw.port === 'number' ? raw.port : DEFAULT_PORT,
    host: typeof raw.host === 'string' ? raw.host : DEFAULT_HOST,
    cors: typeof raw.cors === 'boolean' ? raw.cors : true,
    maxBodySize: raw.maxBodySize === undefined ? DEFAULT_MAX_BODY_SIZE : (parseSize(raw.maxBodySize) as number),
    journal: typeof raw.journal === 'number' ? raw.journal : DEFAULT_JOURNAL_SIZE,
    // Absent unless set: a config without it is the seed's config, field for field.
    ...(typeof raw.basePath === 'string' ? { basePath: buildBasePath(raw.basePath) } : {}),
    ...(raw.https !== undefined && raw.https !== null ? { https: buildHttps(raw.https as Obj, dir) } : {}),
    ...(isObjectValue(raw.headers) && Object.keys(raw.headers).length > 0
      ? { headers: { ...(raw.headers as Record<string, string>) } }
      : {}),
  };
}

const isObjectValue = (v: unknown): v is Obj => v !== null && typeof v === 'object' && !Array.isArray(v);

/** Default port of `server.https` and of `serve --https` without a port. */
export const DEFAULT_HTTPS_PORT = 4443;

function buildHttps(raw: Obj, dir: string): HttpsConfig {
  const https: HttpsConfig = {
    port: typeof raw.port === 'number' ? raw.port : DEFAULT_HTTPS_PORT,
    hosts: Array.isArray(raw.hosts) ? (raw.hosts as string[]) : [],
  };
  if (typeof raw.cert === 'string') https.cert = resolve(dir, raw.cert);
  if (typeof raw.key === 'string') https.key = resolve(dir, raw.key);
  return https;
}

function buildLimits(raw: Obj, limitHeaders: ProviderHeaderStyle[] | undefined): LimitsConfig {
  const limits: LimitsConfig = {};
  if (limitHeaders !== undefined) limits.limitHeaders = limitHeaders;
  if (raw.rateLimit !== undefined && raw.rateLimit !== null) {
    const rateLimit = raw.rateLimit as Obj;
    limits.rateLimit = { requests: rateLimit.requests as number, windowMs: parseDuration(rateLimit.window) as number };
  }
  if (typeof raw.monthlyQuota === 'number') limits.monthlyQuota = raw.monthlyQuota;
  if (typeof raw.store === 'string') limits.store = raw.store;
  if (raw.storeDown === 'open' || raw.storeDown === 'closed') limits.storeDown = raw.storeDown;
  if (raw.headers !== undefined && raw.headers !== null) {
    const styles = (Array.isArray(raw.headers) ? raw.headers : [raw.headers]) as LimitHeaderStyle[];
    limits.headers = [...new Set(styles)];
  }
  if (raw.quotaRetryAfter === 'none') limits.quotaRetryAfter = 'none';
  else if (raw.quotaRetryAfter !== undefined && raw.quotaRetryAfter !== 'until-reset')
    limits.quotaRetryAfter = parseDuration(raw.quotaRetryAfter) as number;
  const meters = buildMeters(raw.meters);
  if (meters !== undefined) limits.meters = meters;
  return limits;
}

/** `limitHeaders:` as a list without repeats; undefined when absent. */
function buildLimitHeaders(raw: unknown): ProviderHeaderStyle[] | undefined {
  if (raw === undefined || raw === null) return undefined;
  return [...new Set((Array.isArray(raw) ? raw : [raw]) as ProviderHeaderStyle[])];
}

/** Default `upstream.timeout`. */
export const DEFAULT_UPSTREAM_TIMEOUT_MS = 30_000;

function buildUpstream(raw: unknown, dir: string): UpstreamConfig | undefined {
  if (raw === null || typeof raw !== 'object') return undefined;
  const u = raw as Obj;
  const upstream: UpstreamConfig = {
    url: String(u.url).replace(/\/+$/, ''),
    headers: Object.fromEntries(Object.entries(section(u.headers))) as Record<string, string>,
    timeoutMs: u.timeout === undefined ? DEFAULT_UPSTREAM_TIMEOUT_MS : (parseDuration(u.timeout) as number),
    fallthrough: u.fallthrough === true,
  };
  if (u.auth !== null && typeof u.auth === 'object')
    upstream.auth = { header: String((u.auth as Obj).header), value: String((u.auth as Obj).value) };
  if (typeof u.ca === 'string') upstream.ca = resolve(dir, u.ca);
  return upstream;
}

function buildRecording(raw: Obj): RecordingConfig {
  const strings = (v: unknown): string[] => (Array.isArray(v) ? v.map(String) : []);
  const redact = section(raw.redact);
  return {
    captureRequestHeaders: strings(raw.captureRequestHeaders).map((h) => h.toLowerCase()),
    keepResponseHeaders: strings(raw.keepResponseHeaders).map((h) => h.toLowerCase()),
    redactFields: strings(redact.fields),
    redactPatterns: strings(redact.patterns),
    recordRefusals: raw.recordRefusals === true,
    recordNotFound: raw.recordNotFound === true,
  };
}

function buildSessions(raw: unknown): SessionsConfig | undefined {
  if (raw === null || typeof raw !== 'object') return undefined;
  const s = raw as Obj;
  const sessions: SessionsConfig = {};
  if (typeof s.byKey === 'boolean') sessions.byKey = s.byKey;
  if (typeof s.max === 'number') sessions.max = s.max;
  if (s.ttl !== undefined) sessions.ttlMs = parseDuration(s.ttl) as number;
  return sessions;
}

function buildScenarios(raw: Obj): Config['scenarios'] {
  return Object.fromEntries(Object.entries(raw).map(([name, s]) => [name, { initial: String((s as Obj).initial) }]));
}

/**
 * Builds the immutable {@link Config} from data that passed the schema and the rules, applying
 * every default. `file` is the absolute config path (undefined for a config object). With
 * `previous` (the config served before a reload), endpoints built from the same data are its own.
 */
export function buildConfig(
  data: unknown,
  dir: string,
  file: string | undefined,
  revision: string,
  previous?: Config,
): Config {
  const raw = data as Obj;
  const config: Config = {
    dir,
    project: typeof raw.project === 'string' ? raw.project : basename(dir) || 'mockapi',
    apiKey: raw.apiKey as string,
    server: buildServer(section(raw.server), dir),
    limits: buildLimits(section(raw.limits), buildLimitHeaders(raw.limitHeaders)),
    endpoints: buildEndpoints(raw.endpoints, dir, previous),
    scenarios: buildScenarios(section(raw.scenarios)),
    revision,
  };
  const keys = buildNamedKeys(raw.keys, raw.plans, config.limits);
  if (keys !== undefined) config.keys = keys;
  if (file !== undefined) config.file = file;
  addSections(config, raw, dir);
  return freezeDeep(config);
}

/** The other optional sections of `raw`, set on `config` when present (in this order: it is the config's key order). */
function addSections(config: Config, raw: Obj, dir: string): void {
  if (typeof raw.seed === 'number') config.seed = raw.seed;
  const webhooks = buildWebhooks(raw.webhooks);
  if (webhooks !== undefined) config.webhooks = webhooks;
  const upstream = buildUpstream(raw.upstream, dir);
  if (upstream !== undefined) config.upstream = upstream;
  if (raw.recording !== null && typeof raw.recording === 'object')
    config.recording = buildRecording(raw.recording as Obj);
  const sessions = buildSessions(raw.sessions);
  if (sessions !== undefined) config.sessions = sessions;
  const verify = buildVerifySettings(raw.verify);
  if (verify !== undefined) config.verify = verify;
  const openapi = buildOpenApi(raw.openapi, dir, (leaf) => buildLeaf(leaf, dir));
  if (openapi !== undefined) config.openapi = openapi;
  if (raw.errors !== undefined && raw.errors !== null) config.errors = buildErrors(raw.errors);
  if (config.limits.limitHeaders !== undefined) config.limitHeaders = config.limits.limitHeaders;
  const authAccept = buildAuthAccept(raw.auth);
  if (authAccept !== undefined) config.authAccept = authAccept;
  const resources = buildResources(raw.resources);
  if (resources !== undefined) config.resources = resources;
  const idempotency = buildIdempotency(raw.idempotency, (resources?.collections.length ?? 0) > 0);
  if (idempotency !== undefined) config.idempotency = idempotency;
  if (isFleet(raw.fleet)) config.fleet = { store: raw.fleet.store, ...resolveFleetStore(raw.fleet.store, process.env) };
}

function isFleet(value: unknown): value is { store: string } {
  return value !== null && typeof value === 'object' && typeof (value as { store?: unknown }).store === 'string';
}
