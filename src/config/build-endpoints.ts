/**
 * Building the endpoints of a loaded config: each endpoint with its plain `response`, its
 * `responses`/`sequence`/`pick` list of answers (nested lists too), its delay, faults, limits,
 * validation, verify examples and cost, every default applied. On a hot reload, the endpoints
 * built from the same data are reused as they were (see endpoint-reuse.ts).
 */
import { resolve } from 'node:path';
import { buildCost, buildRateLimit } from './build-keys.js';
import {
  HTTP_METHODS,
  type AnswerItem,
  type AnswerKind,
  type AnswerList,
  type Config,
  type EndpointConfig,
  type FaultConfig,
  type HttpMethod,
  type ResponseConfig,
  type ValidateMode,
} from './types.js';
import { delayShape, parseDuration, parseFailRate } from './units.js';
import { buildSend } from './build-webhooks.js';
import { buildEndpointFailure } from './build-lookalike.js';
import { buildStream } from './stream-model.js';
import { buildVerify } from './types-verify.js';
import { builtEndpoints, builtFrom, endpointText, recordBuilt, type BuiltEndpoint } from './endpoint-reuse.js';

export const DEFAULT_STATUS = 200;

type Obj = Record<string, unknown>;

/** Optional sections may be absent or left empty (`response:` with nothing under it). */
function section(v: unknown): Obj {
  return v !== null && typeof v === 'object' ? (v as Obj) : {};
}

const isObjectValue = (v: unknown): v is Obj => v !== null && typeof v === 'object' && !Array.isArray(v);

/** `value` and everything under it frozen (an endpoint, the whole config). */
export function freezeDeep<T>(value: T): T {
  const stack: unknown[] = [value];
  while (stack.length > 0) {
    const v = stack.pop();
    if (v === null || typeof v !== 'object' || Object.isFrozen(v)) continue;
    Object.freeze(v);
    for (const child of Object.values(v)) stack.push(child);
  }
  return value;
}

/** The keys an endpoint answers with (response, responses, sequence, pick), in the order they are looked for. */
export const ANSWER_KINDS: readonly AnswerKind[] = ['responses', 'sequence', 'pick'];

/** One leaf answer (`response:`, an item of a list, `openapi.validate.answer`), defaults applied. */
export function buildLeaf(raw: Obj, dir: string): ResponseConfig {
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
  if (raw.delay !== null && typeof raw.delay === 'object') endpoint.delayShape = delayShape(raw.delay as Obj);
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

/**
 * The endpoints of `raw`, reusing those of `previous` built from the same data in the same folder:
 * the same (frozen) objects, which a hot reload of a big config then neither builds, nor compares,
 * nor compiles again (see config/endpoint-reuse.ts, compile.ts and diff.ts).
 */
export function buildEndpoints(raw: unknown, dir: string, previous: Config | undefined): EndpointConfig[] {
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
