import type { RecordedExchange } from './exchange.js';
import { leafOf, reflect, type BodyFile, type Leaf } from './leaves.js';
import type { Scrubber } from './scrub.js';
import { inferTemplates, paramsOf, type TemplateSource } from './templates.js';
import { recordedVerify } from './verify-example.js';

/** A recorded endpoint: its marker (`GET /users/:id`), value for the config, and what the summary says of it. */
export interface RecordedEndpoint {
  key: string;
  method: string;
  path: string;
  /** `response`, `responses` or `sequence`, as config values. */
  answer: Record<string, unknown>;
  requests: number;
  /** Concrete paths folded into this template (more than one when a template was inferred). */
  folded: string[];
  source: TemplateSource;
  /** `responses` by `when` source, or `sequence`; undefined for one answer. */
  variation?: string;
  /** Its `verify:` examples (one, or a list), as a config value. */
  verify?: unknown;
}

export interface InferOptions {
  /** Templates of the config's endpoints: [template, hand-written?]. */
  endpoints: ReadonlyArray<{ method: string; path: string; user: boolean }>;
  /** Templates of the OpenAPI description given with --openapi, by method. */
  openapi: ReadonlyArray<{ method: string; path: string }>;
  captureRequestHeaders: readonly string[];
  keepResponseHeaders: readonly string[];
  scrub: Scrubber;
  /** `recording.recordNotFound`: keep a route whose every answer was a 404 (default: skipped, said in `skipped`). */
  recordNotFound?: boolean;
}

export interface Inference {
  endpoints: RecordedEndpoint[];
  files: Map<string, BodyFile>;
  /** Exchanges not written, with why. */
  skipped: string[];
}

interface Sample {
  ex: RecordedExchange;
  params: Record<string, string>;
  leaf: Leaf;
  key: string;
}

type Reader = (s: Sample) => string | number | boolean | undefined;

/** The top-level scalar fields of a JSON request body, or an empty object. */
function bodyFields(s: Sample): Record<string, unknown> {
  const body = s.ex.requestBody;
  if (body === undefined || body.length === 0 || body.length > 64 * 1024) return {};
  try {
    const value = JSON.parse(body.toString('utf8')) as unknown;
    return value !== null && typeof value === 'object' && !Array.isArray(value)
      ? (value as Record<string, unknown>)
      : {};
  } catch {
    return {};
  }
}

/** The sources a `when` may discriminate on, with each sample's value (undefined when absent). */
function candidates(samples: readonly Sample[], capture: readonly string[]): Array<[string, Reader]> {
  const list: Array<[string, Reader]> = [];
  const first = samples[0] as Sample;
  for (const name of Object.keys(first.params)) list.push([`params.${name}`, (s) => s.params[name]]);
  const queryKeys = [...new Set(samples.flatMap((s) => Object.keys(s.ex.query)))].sort();
  for (const name of queryKeys) list.push([`query.${name}`, (s) => s.ex.query[name]]);
  for (const name of capture) list.push([`headers.${name}`, (s) => s.ex.requestHeaders[name]]);
  const fields = samples.map(bodyFields);
  const names = [...new Set(fields.flatMap((f) => Object.keys(f)))]
    .filter((n) => /^[A-Za-z_][A-Za-z0-9_-]*$/.test(n))
    .sort();
  for (const name of names) {
    list.push([
      `body.${name}`,
      (s) => {
        const v = fields[samples.indexOf(s)]?.[name];
        return typeof v === 'string' || typeof v === 'number' || typeof v === 'boolean' ? v : undefined;
      },
    ]);
  }
  return list;
}

/** Consecutive equal leaves as sequence steps (`times` when repeated). */
function steps(group: readonly Sample[]): Leaf[] {
  const out: Array<{ leaf: Leaf; key: string; times: number }> = [];
  for (const s of group) {
    const last = out[out.length - 1];
    if (last !== undefined && last.key === s.key) last.times++;
    else out.push({ leaf: s.leaf, key: s.key, times: 1 });
  }
  return out.map((o) => (o.times > 1 ? { times: o.times, ...o.leaf } : o.leaf));
}

/** One group's answer: a leaf when all agree, else a sequence in arrival order (the last step repeats). */
function answerOf(group: readonly Sample[]): Record<string, unknown> {
  const distinct = new Set(group.map((s) => s.key));
  return distinct.size === 1 ? (group[0] as Sample).leaf : { sequence: steps(group) };
}

/**
 * Folds one endpoint's samples: one answer when all agree; else the source whose values split them
 * into the fewest answers (each group one leaf, or a sequence when the same request got different
 * answers over time) becomes `when` of `responses`; the most frequent group (the first seen on a
 * tie) is the fallback, without `when`, last.
 */
function fold(
  samples: readonly Sample[],
  capture: readonly string[],
  scrub: Scrubber,
): { answer: Record<string, unknown>; variation?: string } {
  if (new Set(samples.map((s) => s.key)).size === 1) return { answer: { response: (samples[0] as Sample).leaf } };
  const none = steps(samples).length;
  let best: { source: string; groups: Map<string, Sample[]>; values: Map<string, unknown>; score: number } | undefined;
  for (const [source, read] of candidates(samples, capture)) {
    if (samples.some((s) => read(s) === undefined)) continue;
    if (scrub.secretName(source.slice(source.indexOf('.') + 1))) continue;
    // A value that would be redacted (a secret, a field the user named) never goes into a `when`.
    if (samples.some((s) => typeof read(s) === 'string' && scrub.peek(read(s) as string))) continue;
    const groups = new Map<string, Sample[]>();
    const values = new Map<string, unknown>();
    for (const s of samples) {
      const v = JSON.stringify(read(s));
      values.set(v, read(s));
      const g = groups.get(v);
      if (g === undefined) groups.set(v, [s]);
      else g.push(s);
    }
    if (groups.size < 2) continue;
    const score = [...groups.values()].reduce((n, g) => n + steps(g).length, 0);
    if (best === undefined || score < best.score || (score === best.score && groups.size < best.groups.size))
      best = { source, groups, values, score };
  }
  if (best === undefined || best.score > none) return { answer: { sequence: steps(samples) }, variation: 'sequence' };
  const groups = [...best.groups.entries()];
  let fallback = 0;
  groups.forEach(([, g], i) => {
    if (g.length > (groups[fallback] as [string, Sample[]])[1].length) fallback = i;
  });
  const items = groups
    .filter((_, i) => i !== fallback)
    .map(([value, g]) => ({ when: { [best.source]: best.values.get(value) }, ...answerOf(g) }));
  items.push(answerOf((groups[fallback] as [string, Sample[]])[1]) as { when: Record<string, string> });
  return { answer: { responses: items }, variation: best.source };
}

/**
 * Turns recorded traffic into endpoints: templates inferred per method, hand-written routes skipped,
 * each template's answers redacted, reflected and folded. Deterministic: the same exchanges in the
 * same order give the same endpoints and files.
 */
export function inferEndpoints(exchanges: readonly RecordedExchange[], options: InferOptions): Inference {
  const files = new Map<string, BodyFile>();
  const skipped: string[] = [];
  const byMethod = new Map<string, RecordedExchange[]>();
  for (const ex of exchanges) {
    const list = byMethod.get(ex.method);
    if (list === undefined) byMethod.set(ex.method, [ex]);
    else list.push(ex);
  }
  const groups = new Map<string, { method: string; template: string; source: TemplateSource; samples: Sample[] }>();
  for (const [method, list] of byMethod) {
    const known: Array<[string, TemplateSource]> = [
      ...options.endpoints
        .filter((e) => e.method === method || (method === 'HEAD' && e.method === 'GET'))
        .map((e): [string, TemplateSource] => [e.path, 'endpoint']),
      ...options.openapi.filter((e) => e.method === method).map((e): [string, TemplateSource] => [e.path, 'openapi']),
    ];
    const templates = inferTemplates(
      list.map((e) => e.path),
      known,
    );
    for (const ex of list) {
      const choice = templates.get(ex.path) as { template: string; source: TemplateSource };
      const user = options.endpoints.find((e) => e.user && e.method === method && e.path === choice.template);
      if (user !== undefined) {
        skipped.push(
          `${method} ${ex.path}: answered by your endpoint ${method} ${user.path}, which a recording never changes`,
        );
        continue;
      }
      const key = `${method} ${choice.template}`;
      let group = groups.get(key);
      if (group === undefined)
        groups.set(key, (group = { method, template: choice.template, source: choice.source, samples: [] }));
      const params = paramsOf(choice.template, ex.path);
      let plain: Leaf;
      try {
        plain = leafOf(ex, options.keepResponseHeaders, options.scrub, files);
      } catch (err) {
        // One answer that cannot be written never costs the rest of the recording.
        skipped.push(`${method} ${ex.path}: not recorded: ${(err as Error).message}`);
        continue;
      }
      const leaf = reflect(plain, params, ex.query) ?? plain;
      group.samples.push({ ex, params, leaf, key: JSON.stringify(leaf) });
    }
  }
  const endpoints: RecordedEndpoint[] = [];
  for (const [key, group] of groups) {
    if (options.recordNotFound !== true && group.samples.every((s) => s.ex.status === 404)) {
      // A mistyped path, or one the upstream does not have: not an endpoint of the API.
      const paths = [...new Set(group.samples.map((s) => s.ex.path))];
      const shown =
        paths.length <= 3 ? paths.join(', ') : `${paths.slice(0, 3).join(', ')} and ${paths.length - 3} more`;
      const requests = group.samples.length === 1 ? '1 request' : `${group.samples.length} requests`;
      skipped.push(
        `${group.method} ${shown}: the upstream answered only 404 (${requests}; recording.recordNotFound: true keeps it)`,
      );
      continue;
    }
    const { answer, variation } = fold(group.samples, options.captureRequestHeaders, options.scrub);
    endpoints.push({
      key,
      method: group.method,
      path: group.template,
      answer,
      // The examples `mockapi verify` sends: the requests seen, one per answer told apart.
      verify: recordedVerify(group.samples, variation, options.captureRequestHeaders, options.scrub),
      requests: group.samples.length,
      folded: [...new Set(group.samples.map((s) => s.ex.path))],
      source: group.source,
      ...(variation === undefined ? {} : { variation }),
    });
  }
  return { endpoints, files, skipped };
}
