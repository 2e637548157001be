import { deref, isObject, type Json, type JsonObject } from '../description/json-pointer.js';
import { mayBreakSchema, sampleExpanded, type Sampler } from './sample.js';
import type { Expander } from './schema-expand.js';

/** One answer of an imported endpoint: a config leaf (status, headers, body). */
export interface Answer {
  name?: string;
  status: number;
  headers?: Record<string, string>;
  body?: Json;
}

/** What an operation answers: `answers[0]` is the default; with several, each is a named example. */
export interface OperationAnswers {
  answers: Answer[];
  /** Responses (by status) whose schema no generated value satisfied: answered without a body rather than with a body the schema refuses. */
  unsatisfied?: number[];
  /** Whether the default answer's body was generated from the schema (no example in the description). */
  generated: boolean;
  /** The operation's other responses, by status (ascending), each picked with `Prefer: code=<status>`. */
  codes?: CodeAnswers[];
}

/** The answers of one other response of an operation: `answers[0]` its default, the others its named examples. */
export interface CodeAnswers {
  status: number;
  answers: Answer[];
}

export interface AnswerContext {
  doc: JsonObject;
  sampler: Sampler;
  expand: Expander;
  /**
   * Whether a generated value satisfies the schema at `pointer` (a JSON pointer into `doc`, maybe
   * through `$ref`s). Without it, generated values are written unchecked.
   */
  checkAnswer?: (pointer: string, value: Json) => boolean;
}

/** How many choices of `oneOf`/`anyOf` alternatives are tried for a generated value its schema refuses. */
const VARIANTS = 4;

/** The response an endpoint answers with: the lowest 2xx, else `2XX`, else `default`, else the lowest listed. */
function pickResponse(responses: JsonObject): { code: string; status: number } | undefined {
  const codes = Object.keys(responses);
  const numeric = codes.filter((c) => /^[1-5]\d\d$/.test(c)).sort();
  const success = numeric.find((c) => c.startsWith('2'));
  if (success !== undefined) return { code: success, status: Number(success) };
  if (codes.includes('2XX')) return { code: '2XX', status: 200 };
  if (codes.includes('default')) return { code: 'default', status: 200 };
  const first = numeric[0];
  return first === undefined ? undefined : { code: first, status: Number(first) };
}

const isJsonType = (type: string): boolean => /^application\/json\b/i.test(type) || /\+json\b/i.test(type);

/** JSON first (what a client of a mock most often parses), then `*\/*`, then the first listed. */
function pickMediaType(content: JsonObject): string | undefined {
  const types = Object.keys(content);
  return (
    types.find((t) => /^application\/json\b/i.test(t)) ??
    types.find(isJsonType) ??
    types.find((t) => t === '*/*') ??
    types[0]
  );
}

/**
 * Imported text is data, never a mockapi expression: every `${` in a string becomes `$${`, which
 * mockapi sends as `${`. (Mapping keys are never read as expressions.)
 */
export function escapeTemplates(value: Json): Json {
  if (typeof value === 'string') return value.includes('${') ? value.replaceAll('${', () => '$${') : value;
  if (Array.isArray(value)) return value.map(escapeTemplates);
  if (!isObject(value)) return value;
  return Object.fromEntries(Object.entries(value).map(([key, item]) => [key, escapeTemplates(item)]));
}

/** A config leaf for `value` sent as `mediaType`, its text escaped (see escapeTemplates). */
function leafFor(status: number, mediaType: string | undefined, value: Json | undefined): Answer {
  const answer = rawLeafFor(status, mediaType, value);
  if (answer.body !== undefined) answer.body = escapeTemplates(answer.body);
  if (answer.headers !== undefined) answer.headers = escapeTemplates(answer.headers) as Record<string, string>;
  return answer;
}

/** A config leaf for `value` sent as `mediaType`: JSON as YAML, text as text, with a content-type when the default would be wrong. */
function rawLeafFor(status: number, mediaType: string | undefined, value: Json | undefined): Answer {
  const answer: Answer = { status };
  if (value === undefined || status === 204 || status === 304 || status < 200) return answer;
  const type = mediaType === undefined || mediaType === '*/*' ? 'application/json' : mediaType;
  if (isJsonType(type)) {
    // A JSON string, and JSON `null` (a `body: null` leaf would send no body at all), go as their JSON text.
    if (typeof value === 'string' || value === null) {
      answer.headers = { 'content-type': type };
      answer.body = JSON.stringify(value);
    } else {
      if (!/^application\/json$/i.test(type)) answer.headers = { 'content-type': type };
      answer.body = value;
    }
  } else if (typeof value === 'string') {
    if (!/^text\/plain$/i.test(type)) answer.headers = { 'content-type': type };
    answer.body = value;
  } else {
    // XML, forms, binary: an example that is not text cannot be sent as this media type.
    answer.headers = { 'content-type': type };
  }
  return answer;
}

/**
 * An example value with its `$ref`s followed at any depth. Real descriptions put them there (GitHub
 * writes `value: {$ref: …}` and nests more inside values), and bundling leaves every `$ref` in
 * place, or points a repeated one at its first copy: served as is, the body would be the reference.
 * A reference back into a value being expanded stays a reference.
 */
export function resolveExample(doc: Json, value: Json, open = new Set<string>()): Json {
  if (Array.isArray(value)) return value.map((item) => resolveExample(doc, item, open));
  if (!isObject(value)) return value;
  const ref = value.$ref;
  if (typeof ref !== 'string')
    return Object.fromEntries(Object.entries(value).map(([key, item]) => [key, resolveExample(doc, item, open)]));
  const target = open.has(ref) ? undefined : deref(doc, value);
  if (target === undefined) return value;
  open.add(ref);
  const resolved = resolveExample(doc, target, open);
  open.delete(ref);
  return resolved;
}

/** The named examples of a media type that carry an inline value, in the description's order. */
function namedExamples(ctx: AnswerContext, media: JsonObject): [string, Json][] {
  const examples = deref(ctx.doc, media.examples);
  if (!isObject(examples)) return [];
  const found: [string, Json][] = [];
  for (const [name, raw] of Object.entries(examples)) {
    const example = deref(ctx.doc, raw);
    if (isObject(example) && Object.hasOwn(example, 'value'))
      found.push([name, resolveExample(ctx.doc, example.value as Json)]);
  }
  return found;
}

const encode = (token: string): string => token.replace(/~/g, '~0').replace(/\//g, '~1');

/**
 * A body generated from the schema of `mediaType` under the response at `pointer`, checked against
 * that schema (ctx.checkAnswer) and made again with other `oneOf`/`anyOf` choices while refused;
 * undefined when no choice gives a value the schema takes.
 */
function generatedBody(ctx: AnswerContext, schema: Json, pointer: string, mediaType: string): Json | undefined {
  const schemaPointer = `${pointer}/content/${encode(mediaType)}/schema`;
  for (let variant = 0; variant < VARIANTS; variant++) {
    const expanded = ctx.expand(schema, variant);
    const body = sampleExpanded(ctx.sampler, expanded);
    if (ctx.checkAnswer === undefined || !mayBreakSchema(expanded) || ctx.checkAnswer(schemaPointer, body)) return body;
  }
  return undefined;
}

/** The answers of one response of an operation (`code` as the description writes it, answered with `status`); `pointer` is the response's. */
function responseAnswers(
  ctx: AnswerContext,
  responses: JsonObject,
  code: string,
  status: number,
  pointer: string,
): OperationAnswers {
  const response = deref(ctx.doc, responses[code]);
  // A bundle leaves a `$ref` wherever a file was reused: `content`, a media type, `examples` and each example.
  const rawContent = isObject(response) ? deref(ctx.doc, response.content) : undefined;
  const content = isObject(rawContent) ? rawContent : undefined;
  const mediaType = content === undefined ? undefined : pickMediaType(content);
  const media = content !== undefined && mediaType !== undefined ? deref(ctx.doc, content[mediaType]) : undefined;
  if (!isObject(media)) return { answers: [leafFor(status, mediaType, undefined)], generated: false };

  const examples = namedExamples(ctx, media);
  if (examples.length > 0) {
    const answers: Answer[] = examples.map(([name, value]) => ({ name, ...leafFor(status, mediaType, value) }));
    if (answers.length === 1) delete answers[0]?.name; // one example: a plain response, nothing to pick
    return { answers, generated: false };
  }
  if (Object.hasOwn(media, 'example'))
    return { answers: [leafFor(status, mediaType, resolveExample(ctx.doc, media.example as Json))], generated: false };
  if (media.schema === undefined) return { answers: [leafFor(status, mediaType, undefined)], generated: false };
  const body = generatedBody(ctx, media.schema as Json, pointer, mediaType as string);
  if (body === undefined)
    return { answers: [leafFor(status, mediaType, undefined)], generated: true, unsatisfied: [status] };
  return { answers: [leafFor(status, mediaType, body)], generated: true };
}

/**
 * The answers for an operation: the chosen response's named examples (each a named answer, the
 * first the default), else its single `example`, else a body generated from its schema; and, made
 * the same way, those of every other response with a status code of its own (200–599, not the
 * chosen one's), which a client picks with `Prefer: code=<status>`. Ranges (`4XX`) and `default`
 * name no status a client could ask for, and a 1xx is no final answer: they are left out.
 */
export function operationAnswers(ctx: AnswerContext, operation: JsonObject, pointer = ''): OperationAnswers {
  const responses = deref(ctx.doc, operation.responses);
  const picked = isObject(responses) ? pickResponse(responses) : undefined;
  if (picked === undefined || !isObject(responses)) return { answers: [{ status: 200 }], generated: false };
  const at = (code: string): string => `${pointer}/responses/${encode(code)}`;
  const chosen = responseAnswers(ctx, responses, picked.code, picked.status, at(picked.code));
  const unsatisfied = [...(chosen.unsatisfied ?? [])];
  const codes: CodeAnswers[] = [];
  for (const code of Object.keys(responses)
    .filter((c) => /^[2-5]\d\d$/.test(c) && Number(c) !== picked.status)
    .sort((a, b) => Number(a) - Number(b))) {
    const other = responseAnswers(ctx, responses, code, Number(code), at(code));
    if (other.unsatisfied !== undefined) unsatisfied.push(Number(code));
    codes.push({ status: Number(code), answers: other.answers });
  }
  const out: OperationAnswers = { answers: chosen.answers, generated: chosen.generated };
  if (codes.length > 0) out.codes = codes;
  if (unsatisfied.length > 0) out.unsatisfied = unsatisfied;
  return out;
}
