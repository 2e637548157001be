import type { RecordedExchange } from './exchange.js';
import type { Scrubber } from './scrub.js';

/**
 * The `verify:` a recording writes on the endpoints it owns: the request of the first sample of
 * each answer it tells apart (one for a single answer or a sequence; one per `when` group), with
 * the status it got as `expect` — redacted like everything recorded: only captured request headers
 * (never a credential), secret-named query fields and body fields left out or `<redacted>`.
 */

/** One sample of an endpoint: the exchange and the path parameters its template gave. */
export interface VerifySample {
  ex: RecordedExchange;
  params: Record<string, string>;
}

/** Never written into an example, whatever `captureRequestHeaders` says. */
const CREDENTIAL_HEADERS = /^(authorization|proxy-authorization|x-api-key|api-key|cookie)$/i;
/** Request bodies above this are not kept as an example's body. */
const MAX_BODY = 16 * 1024;

/** The value a `when` source (`query.tier`, `params.id`, `headers.x`, `body.kind`) reads from a sample. */
function sourceValue(sample: VerifySample, source: string): string {
  const dot = source.indexOf('.');
  const where = source.slice(0, dot);
  const name = source.slice(dot + 1);
  if (where === 'params') return String(sample.params[name]);
  if (where === 'query') return String(sample.ex.query[name]);
  if (where === 'headers') return String(sample.ex.requestHeaders[name]);
  const body = bodyValue(sample.ex.requestBody);
  return JSON.stringify(
    body !== null && typeof body === 'object' ? (body as Record<string, unknown>)[name] : undefined,
  );
}

function bodyValue(bytes: Buffer | undefined): unknown {
  if (bytes === undefined || bytes.length === 0 || bytes.length > MAX_BODY) return undefined;
  const text = bytes.toString('utf8');
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return Buffer.from(text, 'utf8').equals(bytes) ? text : undefined;
  }
}

function exampleOf(sample: VerifySample, capture: readonly string[], scrub: Scrubber): Record<string, unknown> {
  const request: Record<string, unknown> = {};
  if (Object.keys(sample.params).length > 0)
    request.params = Object.fromEntries(Object.entries(sample.params).map(([k, v]) => [k, scrub.text(v)]));
  const query = Object.entries(sample.ex.query).filter(([k]) => !scrub.secretName(k));
  if (query.length > 0) request.query = Object.fromEntries(query.map(([k, v]) => [k, scrub.text(v)]));
  const headers = capture.filter(
    (h) => !CREDENTIAL_HEADERS.test(h) && !scrub.secretName(h) && sample.ex.requestHeaders[h] !== undefined,
  );
  if (headers.length > 0)
    request.headers = Object.fromEntries(headers.map((h) => [h, scrub.text(sample.ex.requestHeaders[h] as string)]));
  const body = bodyValue(sample.ex.requestBody);
  if (body !== undefined) request.body = typeof body === 'string' ? scrub.text(body) : scrub.json(body);
  return Object.keys(request).length > 0 ? { request, expect: sample.ex.status } : { expect: sample.ex.status };
}

/**
 * The examples of one recorded endpoint. `variation` is the `when` source its answers are told
 * apart by (undefined for one answer, `sequence` for answers over time); one object for one
 * example, a list for several.
 */
export function recordedVerify(
  samples: readonly VerifySample[],
  variation: string | undefined,
  capture: readonly string[],
  scrub: Scrubber,
): Record<string, unknown> | Array<Record<string, unknown>> {
  const firsts: VerifySample[] = [];
  if (variation === undefined || variation === 'sequence') firsts.push(samples[0] as VerifySample);
  else {
    const seen = new Set<string>();
    for (const s of samples) {
      const value = sourceValue(s, variation);
      if (seen.has(value)) continue;
      seen.add(value);
      firsts.push(s);
    }
  }
  const examples = firsts.map((s) => exampleOf(s, capture, scrub));
  return examples.length === 1 ? (examples[0] as Record<string, unknown>) : examples;
}

type Obj = Record<string, unknown>;
const isObject = (v: unknown): v is Obj => v !== null && typeof v === 'object' && !Array.isArray(v);

/** What the user added to a recorded endpoint's examples and a new recording keeps: `name` and `ignore`, example by example. */
function keptFields(example: unknown): Obj {
  if (!isObject(example)) return {};
  return Object.fromEntries(Object.entries(example).filter(([k]) => k === 'name' || k === 'ignore'));
}

/**
 * A recorded endpoint's new `verify:` over its old one: `false` stays (the user left it out); the
 * new examples keep the `name` and `ignore` of the old example at the same place.
 */
export function mergeRecordedVerify(old: unknown, fresh: unknown): unknown {
  if (old === false || fresh === undefined) return old === undefined ? fresh : old;
  if (old === undefined || old === null) return fresh;
  const olds = Array.isArray(old) ? old : [old];
  if (Array.isArray(fresh)) return fresh.map((example, i) => ({ ...(example as Obj), ...keptFields(olds[i]) }));
  return { ...(fresh as Obj), ...keptFields(olds[0]) };
}
