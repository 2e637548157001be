import { basename, resolve } from 'node:path';
import { buildCost, buildMeters, buildNamedKeys, buildRateLimit } from './build-keys.js';
import {
  HTTP_METHODS,
  type AnswerItem,
  type DelayShape,
  type FaultConfig,
  type LimitHeaderStyle,
  type AnswerKind,
  type AnswerList,
  type Config,
  type EndpointConfig,
  type HttpMethod,
  type LimitsConfig,
  type ProviderHeaderStyle,
  type ResponseConfig,
  type ServerConfig,
  type HttpsConfig,
  type UpstreamConfig,
  type RecordingConfig,
  type ValidateMode,
  type SessionsConfig,
} from './types.js';
import { buildOpenApi } from './build-openapi.js';
import { parseDuration, parseFailRate, parseSize } from './units.js';
import { buildSend, buildWebhooks } from './build-webhooks.js';
import { buildAuthAccept, buildBasePath, buildEndpointFailure, buildErrors } from './build-lookalike.js';
import { buildStream } from './stream-model.js';
import { buildVerify, buildVerifySettings } from './types-verify.js';
import { buildIdempotency, buildResources } from './build-resources.js';
import { resolveFleetStore } from './fleet.js';
import { builtEndpoints, builtFrom, endpointText, recordBuilt, type BuiltEndpoint } from './endpoint-reuse.js';

/** The config's defaults (port 4010, host 127.0.0.1, CORS on, 1 MiB bodies). */
export const DEFAULT_PORT = 4010;
export const DEFAULT_HOST = '127.0.0.1';
export const DEFAULT_MAX_BODY_SIZE = 1024 * 1024;
/** Requests kept in the request journal by default. */
export const DEFAULT_JOURNAL_SIZE = 1000;
export const DEFAULT_STATUS = 200;

type Obj = Record<string, unknown>;

/** Optional sections may be absent or left empty (`server:` with nothing under it). */
function section(v: unknown): Obj {
  return v !== null && typeof v === 'object' ? (v as Obj) : {};
}

function freezeDeep<T>(value: T): T {
  const stack: unknown[] = [value];
  while (stack.length > 0) {
    const v = stack.pop();
    if (v === null || typeof v !== 'object' || Object.isFrozen(v)) continue;
    Object.freeze(v);
    for (const child of Object.values(v)) stack.push(child);
  }
  return value;
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

/** The keys an endpoint answers with (response, responses, sequence, pick), in the order they are looked for. */
export const ANSWER_KINDS: readonly AnswerKind[] = ['responses', 'sequence', 'pick'];

function buildLeaf(raw: Obj, dir: string): ResponseConfig {
  const leaf: ResponseConfig = {
    status: typeof raw.status === 'number' ? raw.status : DEFAULT_STATUS,
    // a fresh object: a header named `__proto__` stays an ordinary entry
    headers: Object.fromEntries(Object.entries(section(raw.headers))) as Record<string, string>,
  };
  if (typeof raw.status === 'string') leaf.statusExpression = raw.status;
  if (Object.prototype.hasOwnProperty.call(raw, 'body')) leaf.body = raw.body;
  if (typeof raw.bodyFile === 'string') leaf.bodyFile = resolve(dir, raw.bodyFile);
  if (typeof raw.name === 'string') leaf.name = raw.name;
  if (raw.delay !== undefined) leaf.delayMs = parseDuration(raw.delay) as number;
  if (Array.isArray(raw.faults) && raw.faults.length > 0) leaf.faults = buildFaults(raw.faults);
  const send = buildSend(raw.send);
  if (send !== undefined) leaf.send = send;
  if (raw.stream !== null && typeof raw.stream === 'object') leaf.stream = buildStream(raw.stream as Obj);
  if (raw.setState !== null && typeof raw.setState === 'object')
    leaf.setState = Object.fromEntries(Object.entries(raw.setState)) as Record<string, string>;
  return leaf;
}

function buildList(raw: Obj, kind: AnswerKind, dir: string): AnswerList {
  const items = (raw[kind] as unknown[]).map((item) => buildItem(item as Obj, dir));
  return { kind, loop: raw.loop === true, items };
}

function buildItem(raw: Obj, dir: string): AnswerItem {
  const kind = ANSWER_KINDS.find((k) => Array.isArray(raw[k]));
  const fields = {
    times: typeof raw.times === 'number' ? raw.times : 1,
    weight: typeof raw.weight === 'number' ? raw.weight : 1,
    ...(typeof raw.name === 'string' ? { name: raw.name } : {}),
    ...(raw.when !== null && typeof raw.when === 'object' ? { when: raw.when as Record<string, unknown> } : {}),
  };
  return kind === undefined ? { ...fields, leaf: buildLeaf(raw, dir) } : { ...fields, list: buildList(raw, kind, dir) };
}

function buildEndpoint(raw: Obj, dir: string): EndpointConfig {
  const method = String(raw.method).toUpperCase() as HttpMethod;
  if (!HTTP_METHODS.includes(method)) throw new Error(`unvalidated method ${method}`); // the schema guarantees this
  const endpoint: EndpointConfig = {
    method,
    path: raw.path as string,
    failRate: raw.failRate === undefined ? 0 : (parseFailRate(raw.failRate) as number),
    delayMs: raw.delay === undefined || typeof raw.delay === 'object' ? 0 : (parseDuration(raw.delay) as number),
    response: buildLeaf(section(raw.response), dir),
  };
  if (raw.delay !== null && typeof raw.delay === 'object') endpoint.delayShape = buildDelayShape(raw.delay as Obj);
  if (Array.isArray(raw.faults) && raw.faults.length > 0) endpoint.faults = buildFaults(raw.faults);
  const kind = ANSWER_KINDS.find((k) => Array.isArray(raw[k]));
  if (kind !== undefined) endpoint.answers = buildList(raw, kind, dir);
  if (typeof raw.seedBy === 'string') endpoint.seedBy = raw.seedBy;
  const rateLimit = isObjectValue(raw.limits) ? buildRateLimit(raw.limits.rateLimit) : undefined;
  if (rateLimit !== undefined) endpoint.rateLimit = rateLimit;
  if (typeof raw.openapi === 'string') endpoint.openapi = raw.openapi.trim();
  if (typeof raw.openapiSpec === 'string') endpoint.openapiSpec = resolve(dir, raw.openapiSpec.trim());
  if (typeof raw.validate === 'string') endpoint.validate = raw.validate as ValidateMode;
  const simulatedFailure = buildEndpointFailure(raw.errors);
  if (simulatedFailure !== undefined) endpoint.simulatedFailure = simulatedFailure;
  const verify = buildVerify(raw.verify);
  if (verify !== undefined) endpoint.verify = verify;
  const cost = buildCost(raw.cost);
  if (cost !== undefined) endpoint.cost = cost;
  return endpoint;
}

/** Default `after` of a `hang` fault. */
export const DEFAULT_HANG_MS = 5 * 60_000;
/** Default `bytesPerSecond` of a `slow` fault. */
export const DEFAULT_SLOW_BYTES_PER_SECOND = 1024;

function buildFaults(raw: unknown[]): FaultConfig[] {
  return raw.map((item) => {
    const f = item as Obj;
    const fault: FaultConfig = {
      kind: f.kind as FaultConfig['kind'],
      rate: parseFailRate(f.rate) as number,
      afterMs: f.after === undefined ? DEFAULT_HANG_MS : (parseDuration(f.after) as number),
      bytesPerSecond: typeof f.bytesPerSecond === 'number' ? f.bytesPerSecond : DEFAULT_SLOW_BYTES_PER_SECOND,
    };
    if (typeof f.bytes === 'number') fault.bytes = f.bytes;
    return fault;
  });
}

function buildDelayShape(raw: Obj): DelayShape {
  if (raw.median !== undefined)
    return {
      kind: 'lognormal',
      medianMs: parseDuration(raw.median) as number,
      p99Ms: parseDuration(raw.p99) as number,
    };
  return { kind: 'uniform', minMs: parseDuration(raw.min) as number, maxMs: parseDuration(raw.max) as number };
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
 * The endpoints of `raw`, reusing those of `previous` built from the same data in the same folder:
 * the same (frozen) objects, which a hot reload of a big config then neither builds, nor compares,
 * nor compiles again (see config/endpoint-reuse.ts, compile.ts and diff.ts).
 */
function buildEndpoints(raw: unknown, dir: string, previous: Config | undefined): EndpointConfig[] {
  if (!Array.isArray(raw)) return [];
  const before = builtEndpoints(previous, dir);
  const byText = new Map<string, BuiltEndpoint>();
  const endpoints = raw.map((item) => {
    const text = endpointText(item);
    let known = text === undefined ? undefined : before.get(text);
    if (known === undefined) {
      const endpoint = freezeDeep(buildEndpoint(item as Obj, dir));
      if (text === undefined) return endpoint;
      known = builtFrom(endpoint, text);
    }
    byText.set(text as string, known);
    return known.endpoint;
  });
  recordBuilt(endpoints, byText);
  return endpoints;
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
  return freezeDeep(config);
}

function isFleet(value: unknown): value is { store: string } {
  return value !== null && typeof value === 'object' && typeof (value as { store?: unknown }).store === 'string';
}
