import { readFile } from 'node:fs/promises';
import { extname } from 'node:path';
import type { FaultConfig, ResponseConfig } from '../config/types.js';
import type { RequestContext } from '../expression/context.js';
import { compileString, type CompiledString } from '../expression/string-template.js';
import { textOf } from '../expression/values.js';
import { bodyLength, TEXT_BODY_MAX, writtenForm, type AnswerBody } from './answer-body.js';
import { JSON_CONTENT_TYPE, TEXT_CONTENT_TYPE } from './responses.js';
import { AnswerTooLarge, compileTemplate, isStatic, type CompiledTemplate } from '../expression/template.js';
import type { ExpressionOptions } from '../expression/compile.js';
import type { AnswerParts, LeafParts } from './parts.js';

/** An answer ready to write: status, the header list (content-type and content-length included) and the body. */
export interface RenderedAnswer {
  readonly status: number;
  readonly headers: readonly string[];
  readonly body: AnswerBody;
  /** Set when the answer could not be made as configured (a status expression that gave no status): a 500 is sent instead, with this note in the log. */
  readonly problem?: string;
  /** With `problem`, when the client should read why (an answer over the size limits): the 500's message. */
  readonly problemMessage?: string;
}

/** A leaf compiled once per load: its fixed answer when nothing in it varies, else `render` per request. */
export interface CompiledLeaf extends LeafParts {
  /** The answer's `name`, else its position (`responses[2]`, `responses[1].sequence[0]`, `response`). */
  readonly label: string;
  readonly delayMs: number;
  readonly setState: ReadonlyArray<readonly [string, string]>;
  readonly fixed: RenderedAnswer | undefined;
  readonly render: (ctx: RequestContext) => RenderedAnswer;
  readonly usesFaker: boolean;
  /** The leaf's network faults, when it has any. */
  readonly faults?: readonly FaultConfig[];
}

const CONTENT_TYPES: Record<string, string> = {
  '.json': JSON_CONTENT_TYPE,
  '.txt': TEXT_CONTENT_TYPE,
  '.html': 'text/html; charset=utf-8',
  '.htm': 'text/html; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.mjs': 'text/javascript; charset=utf-8',
  '.xml': 'application/xml; charset=utf-8',
  '.csv': 'text/csv; charset=utf-8',
  '.yaml': 'application/yaml; charset=utf-8',
  '.yml': 'application/yaml; charset=utf-8',
  '.md': 'text/markdown; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.jpg': 'image/jpeg',
  '.jpeg': 'image/jpeg',
  '.gif': 'image/gif',
  '.webp': 'image/webp',
  '.pdf': 'application/pdf',
  '.zip': 'application/zip',
};

/** Statuses that must not carry a body (RFC 9110). */
export function isBodiless(status: number): boolean {
  return status < 200 || status === 204 || status === 304;
}

/** Framing and connection headers are Node's to set; we always send the true length. */
function isFraming(lower: string): boolean {
  return (
    lower === 'content-length' || lower === 'transfer-encoding' || lower === 'connection' || lower === 'keep-alive'
  );
}

/** The body and content type of a body that does not vary, in the form it is written (see writtenForm). */
export async function fixedBody(leaf: ResponseConfig): Promise<{ body: AnswerBody; contentType?: string }> {
  const { body, bodyFile } = leaf;
  if (bodyFile !== undefined) {
    const type = CONTENT_TYPES[extname(bodyFile).toLowerCase()] ?? 'application/octet-stream';
    return { body: writtenForm(await readFile(bodyFile)), contentType: type };
  }
  const text = bodyText(body);
  return { ...text, body: writtenForm(text.body) };
}

/** A body value as text: nothing is empty, a string is itself (text/plain), anything else its JSON. */
function bodyText(value: unknown): { body: string; contentType?: string } {
  if (value === undefined || value === null) return { body: '' };
  if (typeof value === 'string') return { body: value, contentType: TEXT_CONTENT_TYPE };
  return { body: JSON.stringify(value), contentType: JSON_CONTENT_TYPE };
}

/**
 * A compiled body for one request, as text (see AnswerBody): a mapping or list from its JSON text
 * directly, without building the object. A body over the size limits gives its message instead.
 */
function renderTemplate(
  template: CompiledTemplate,
  ctx: RequestContext,
): { body: string; contentType?: string } | AnswerTooLarge {
  try {
    if (template.json !== undefined) return { body: template.json(ctx), contentType: JSON_CONTENT_TYPE };
    return bodyText(template.evaluate(ctx));
  } catch (error) {
    if (error instanceof AnswerTooLarge) return error;
    throw error;
  }
}

/** The header list of an answer: the configured headers, then content-type (unless given) and content-length. */
export function headerList(
  configured: ReadonlyArray<readonly [string, string]>,
  status: number,
  body: AnswerBody,
  contentType: string | undefined,
): string[] {
  const headers: string[] = [];
  let hasContentType = false;
  for (const [name, value] of configured) {
    if (name.length === 12 && name.toLowerCase() === 'content-type') hasContentType = true;
    headers.push(name, value);
  }
  if (isBodiless(status)) return headers;
  if (!hasContentType && contentType !== undefined) headers.push('content-type', contentType);
  headers.push('content-length', String(bodyLength(body)));
  return headers;
}

/** The precomputed answer of a leaf without expressions (today's static path). */
export async function fixedAnswer(leaf: ResponseConfig): Promise<RenderedAnswer> {
  const { status } = leaf;
  const encoded = isBodiless(status) ? { body: '' } : await fixedBody(leaf);
  const configured = Object.entries(leaf.headers).filter(([name]) => !isFraming(name.toLowerCase()));
  return { status, headers: headerList(configured, status, encoded.body, encoded.contentType), body: encoded.body };
}

/** Whether a leaf varies per request: expressions in its status, header values or body. */
export function isDynamicLeaf(leaf: ResponseConfig): boolean {
  return (
    leaf.stream !== undefined ||
    leaf.statusExpression !== undefined ||
    Object.values(leaf.headers).some((v) => v.includes('${')) ||
    (leaf.bodyFile === undefined && !isStatic(leaf.body))
  );
}

/** Header values from request data: characters a header cannot carry (line breaks…) are dropped. */
const NOT_HEADER_TEXT = /[^\t\x20-\x7e\x80-\xff]/g;

function compiledOrThrow(text: string, options: ExpressionOptions): CompiledString {
  const result = compileString(text, options);
  // The config rules compiled every string already: a failure here is a bug, not a config problem.
  if (!result.ok) throw new Error(`unvalidated expression ${JSON.stringify(text)}: ${result.issue.message}`);
  return result.value;
}

function statusOf(value: unknown): number | undefined {
  const n =
    typeof value === 'number' ? value : typeof value === 'string' && /^\d{3}$/.test(value.trim()) ? Number(value) : NaN;
  return Number.isInteger(n) && n >= 100 && n <= 599 ? n : undefined;
}

/**
 * Compiles one leaf (validated config) for `label`. `parts`: the capabilities' compile steps of a
 * leaf's `send:` and `stream:`; undefined where the config has none to give (the answer of
 * `openapi.validate`, status, headers and body only).
 */
export async function compileLeaf(
  leaf: ResponseConfig,
  label: string,
  options: ExpressionOptions,
  parts: AnswerParts | undefined,
): Promise<CompiledLeaf> {
  const common = {
    label: leaf.name ?? label,
    delayMs: leaf.delayMs ?? 0,
    setState: Object.entries(leaf.setState ?? {}),
    ...(leaf.faults === undefined ? {} : { faults: leaf.faults }),
    ...(leaf.send === undefined ? {} : { send: given(parts, 'send').sends(leaf.send, options) }),
  };
  if (!isDynamicLeaf(leaf)) {
    const fixed = await fixedAnswer(leaf);
    return { ...common, fixed, render: () => fixed, usesFaker: false };
  }
  const status = leaf.statusExpression === undefined ? undefined : compiledOrThrow(leaf.statusExpression, options);
  const stream = leaf.stream === undefined ? undefined : given(parts, 'stream').stream(leaf.stream, options);
  const configured = Object.entries(leaf.headers).filter(([name]) => !isFraming(name.toLowerCase()));
  const headers = configured.map(
    ([name, value]) => [name, value.includes('${') ? compiledOrThrow(value, options) : value] as const,
  );
  let template: CompiledTemplate | undefined;
  let body: { body: AnswerBody; contentType?: string } | undefined;
  if (stream !== undefined) body = { body: '' };
  else if (leaf.bodyFile !== undefined || isStatic(leaf.body)) body = await fixedBody(leaf);
  else {
    const compiled = compileTemplate(leaf.body, options);
    if (!compiled.ok) throw new Error(`unvalidated body: ${compiled.issues[0]?.message ?? ''}`);
    template = compiled.value;
  }
  const usesFaker =
    (stream?.usesFaker ?? false) ||
    (status?.usesFaker ?? false) ||
    headers.some(([, v]) => typeof v !== 'string' && v.usesFaker) ||
    (template?.usesFaker ?? false);
  const shared = sharedLargeBody();
  const render = (ctx: RequestContext): RenderedAnswer => {
    const code = status === undefined ? leaf.status : statusOf(status.evaluate(ctx));
    if (code === undefined)
      return {
        status: 500,
        headers: [],
        body: '',
        problem: `the status expression gave ${JSON.stringify(textOf(status?.evaluate(ctx)))}, not a status from 100 to 599`,
      };
    const values: Array<readonly [string, string]> = headers.map(([name, value]) => [
      name,
      typeof value === 'string' ? value : textOf(value.evaluate(ctx)).replace(NOT_HEADER_TEXT, ''),
    ]);
    if (stream !== undefined) return { status: code, headers: streamHeaders(values, stream.contentType), body: '' };
    const encoded = isBodiless(code) ? { body: '' } : (body ?? renderTemplate(template as CompiledTemplate, ctx));
    if (encoded instanceof AnswerTooLarge)
      return { status: 500, headers: [], body: '', problem: encoded.message, problemMessage: encoded.message };
    const written = shared(encoded.body);
    return { status: code, headers: headerList(values, code, written, encoded.contentType), body: written };
  };
  return { ...common, fixed: undefined, render, usesFaker, ...(stream === undefined ? {} : { stream }) };
}

/** The parts a leaf with `field` needs; a config that has it always gives them. */
function given(parts: AnswerParts | undefined, field: string): AnswerParts {
  if (parts === undefined) throw new Error(`a leaf with ${field} compiled without the capabilities' parts`);
  return parts;
}

/**
 * A large rendered body as bytes, shared while it comes out the same: a body rendered per request
 * but equal to the last one (a `$repeat` of a query value many clients send alike) is written from
 * one buffer, which Node sends without copying, where each text body was encoded into a buffer of
 * its own for every client that reads slowly (and the text kept beside it). A body that differs
 * gets its own bytes, the text let go at once. Small bodies stay text (see AnswerBody).
 */
function sharedLargeBody(): (body: AnswerBody) => AnswerBody {
  let last: { text: string; bytes: Buffer } | undefined;
  return (body) => {
    if (typeof body !== 'string' || body.length <= TEXT_BODY_MAX) return body;
    if (last !== undefined && last.text.length === body.length && last.text === body) return last.bytes;
    last = { text: body, bytes: Buffer.from(body, 'utf8') };
    return last.bytes;
  };
}

/** A stream's head: the configured headers, its content type (unless given) and `cache-control: no-cache`; no length (chunked). */
function streamHeaders(configured: ReadonlyArray<readonly [string, string]>, contentType: string): string[] {
  const headers: string[] = [];
  let hasType = false;
  let hasCache = false;
  for (const [name, value] of configured) {
    const lower = name.toLowerCase();
    hasType ||= lower === 'content-type';
    hasCache ||= lower === 'cache-control';
    headers.push(name, value);
  }
  if (!hasType) headers.push('content-type', contentType);
  if (!hasCache) headers.push('cache-control', 'no-cache');
  return headers;
}
