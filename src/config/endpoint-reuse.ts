import type { Config, EndpointConfig } from './types.js';

/*
 * What a reload may take over from the config served before it, endpoint by endpoint: an endpoint
 * whose data (its JSON text) did not change passed the rules then and was built then, so a big
 * config's reload checks and builds again only what changed (config/rules.ts, config/build.ts; the
 * compiled form: answer/compile.ts).
 */

/** The JSON text of each endpoint's data, computed once per data object (the rules and the build both ask). */
const texts = new WeakMap<object, string | null>();
/** The text each built endpoint was built from, and whether its data reads a file. */
const sources = new WeakMap<EndpointConfig, { text: string; readsFile: boolean }>();

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

/** Records that `endpoint` was built from data of this `text`. */
export function builtFrom(endpoint: EndpointConfig, text: string): void {
  sources.set(endpoint, { text, readsFile: text.includes('"bodyFile"') || text.includes('"openapiSpec"') });
}

/** The endpoints of `previous` by the text of their data, when they were built in `dir` (else none). */
export function builtEndpoints(previous: Config | undefined, dir: string): Map<string, EndpointConfig> {
  const built = new Map<string, EndpointConfig>();
  if (previous?.dir !== dir) return built;
  for (const endpoint of previous.endpoints) {
    const source = sources.get(endpoint);
    if (source !== undefined) built.set(source.text, endpoint);
  }
  return built;
}

/** Endpoint data the rules passed in the config served before, and the scenario names they were checked with. */
export interface CheckedEndpoints {
  texts: ReadonlySet<string>;
  scenarios: readonly string[];
}

/**
 * The endpoint data of `previous` (a config that passed every rule) that need not be checked again
 * in `dir`: none that reads a file (`bodyFile`, `openapiSpec`: the file may have gone since).
 */
export function checkedEndpoints(previous: Config | undefined, dir: string): CheckedEndpoints | undefined {
  if (previous?.dir !== dir) return undefined;
  const checked = new Set<string>();
  for (const endpoint of previous.endpoints) {
    const source = sources.get(endpoint);
    if (source !== undefined && !source.readsFile) checked.add(source.text);
  }
  return { texts: checked, scenarios: Object.keys(previous.scenarios) };
}
