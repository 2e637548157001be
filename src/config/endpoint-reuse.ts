import type { Config, EndpointConfig } from './types.js';

/*
 * What a reload may take over from the config served before it, endpoint by endpoint: an endpoint
 * whose data (its JSON text) did not change passed the rules then and was built then, so a big
 * config's reload checks and builds again only what changed (config/rules.ts, config/build.ts; the
 * compiled form: answer/compile.ts).
 */

/** The JSON text of each endpoint's data, computed once per data object (the rules and the build both ask). */
const texts = new WeakMap<object, string | null>();

/**
 * The JSON text of an endpoint's data, or undefined when it cannot identify it: not an object, or
 * text with `null` in it (JSON also writes NaN and ±Infinity as null).
 */
export function endpointText(raw: unknown): string | undefined {
  if (raw === null || typeof raw !== 'object') return undefined;
  let text = texts.get(raw);
  if (text === undefined) {
    const json = JSON.stringify(raw);
    text = json.includes('null') ? null : json;
    texts.set(raw, text);
  }
  return text ?? undefined;
}

/** A built endpoint, and whether its data reads a file. */
export interface BuiltEndpoint {
  readonly endpoint: EndpointConfig;
  readonly readsFile: boolean;
}

/**
 * The endpoints of each config's list by the text of their data, made while the list is built (a
 * reload then finds them without going through the list again).
 */
const built = new WeakMap<readonly EndpointConfig[], ReadonlyMap<string, BuiltEndpoint>>();
const NONE: ReadonlyMap<string, BuiltEndpoint> = new Map();

/** An endpoint built from data of this `text`. */
export function builtFrom(endpoint: EndpointConfig, text: string): BuiltEndpoint {
  return { endpoint, readsFile: text.includes('"bodyFile"') || text.includes('"openapiSpec"') };
}

/** Records that `endpoints` (a config's list) were built from data of these texts (by index; undefined for none). */
export function recordBuilt(endpoints: readonly EndpointConfig[], byText: ReadonlyMap<string, BuiltEndpoint>): void {
  built.set(endpoints, byText);
}

/** The endpoints of `previous` by the text of their data, when they were built in `dir` (else none). */
export function builtEndpoints(previous: Config | undefined, dir: string): ReadonlyMap<string, BuiltEndpoint> {
  if (previous?.dir !== dir) return NONE;
  return built.get(previous.endpoints) ?? NONE;
}

/** Endpoint data the rules passed in the config served before, and the scenario names they were checked with. */
export interface CheckedEndpoints {
  /** The JSON texts (see endpointText) of that data. */
  texts: { has(text: string): boolean };
  scenarios: readonly string[];
}

/**
 * The endpoint data of `previous` (a config that passed every rule) that need not be checked again
 * in `dir`: none that reads a file (`bodyFile`, `openapiSpec`: the file may have gone since).
 */
export function checkedEndpoints(previous: Config | undefined, dir: string): CheckedEndpoints | undefined {
  if (previous?.dir !== dir) return undefined;
  const byText = builtEndpoints(previous, dir);
  const has = (text: string): boolean => byText.get(text)?.readsFile === false;
  return { texts: { has }, scenarios: Object.keys(previous.scenarios) };
}

/**
 * Endpoint data that passed the schema, read from a file. Data read is never changed, and the
 * schema checks each item of `endpoints` on its own (test/unit/config-fast-read-reuse.test.ts holds the
 * schema to that), so such an item need not be checked again when a reload reads it unchanged.
 */
const passedSchema = new WeakSet<object>();

/**
 * Whether `data` passes the schema; `validate.errors` tells why not. With `remember` (data the
 * config reader made, never a caller's object), endpoint data that passed before is left out of
 * the check, and what passes now is remembered. A failing check is always made on the whole data,
 * so its errors are the same.
 */
export function passesSchema(data: unknown, validate: (data: unknown) => boolean, remember: boolean): boolean {
  const list =
    remember && data !== null && typeof data === 'object' ? (data as Record<string, unknown>).endpoints : undefined;
  if (!Array.isArray(list)) return validate(data);
  const unchecked = list.filter((item) => item === null || typeof item !== 'object' || !passedSchema.has(item));
  if (unchecked.length < list.length && validate({ ...(data as object), endpoints: unchecked })) {
    for (const item of unchecked) if (item !== null && typeof item === 'object') passedSchema.add(item);
    return true;
  }
  if (!validate(data)) return false;
  for (const item of list) if (item !== null && typeof item === 'object') passedSchema.add(item);
  return true;
}
