import type { RequestContext } from '../expression/context.js';
import type { RenderedAnswer } from '../answer/leaf.js';
import { bodyBytes } from '../answer/answer-body.js';
import { emptyContext, type CompiledEvent, type CompiledSend, type CompiledWebhooks } from './compile.js';
import type { OutgoingEvent } from './dispatcher.js';

/** An event a `send` prepared, or why it cannot be sent (told in the journal's notes). */
export type PreparedSend =
  { readonly event: OutgoingEvent; readonly send: CompiledSend } | { readonly problem: string };

type Obj = Record<string, unknown>;
const isPlain = (v: unknown): v is Obj => v !== null && typeof v === 'object' && !Array.isArray(v);

/** `over` laid on `base`: mappings merge key by key (`over` wins), anything else is replaced. */
export function mergeData(base: unknown, over: unknown): unknown {
  if (over === undefined) return base;
  if (!isPlain(base) || !isPlain(over)) return over;
  const merged: Obj = { ...base };
  // Own keys only, defined rather than assigned: a `__proto__` key of JSON data stays a field (an
  // assignment would set the merged object's prototype, and reading base's would read Object.prototype).
  for (const [key, value] of Object.entries(over))
    Object.defineProperty(merged, key, {
      value: mergeData(Object.hasOwn(base, key) ? base[key] : undefined, value),
      enumerable: true,
      writable: true,
      configurable: true,
    });
  return merged;
}

/** The answer as `${response.*}` reads it: its status, and its body (parsed when JSON). */
export function responseValue(rendered: RenderedAnswer): { status: number; body: unknown } {
  const text = bodyBytes(rendered.body).toString('utf8');
  let body: unknown = text === '' ? undefined : text;
  try {
    if (text !== '') body = JSON.parse(text);
  } catch {
    // a text body stays text
  }
  return { status: rendered.status, body };
}

/** Whether `url` names a loopback host: where a URL built from request data may go. */
export function isLoopbackUrl(url: string): boolean {
  try {
    const host = new URL(url).hostname.replace(/^\[|\]$/g, '');
    return host === 'localhost' || host === '::1' || /^127\.\d+\.\d+\.\d+$/.test(host);
  } catch {
    return false;
  }
}

/**
 * Whether `url`'s path is under `/__mockapi/` (any case, percent-escapes decoded): a mockapi's
 * admin API, where no delivery may go (the admin API also refuses every delivery by its mark).
 */
export function isAdminUrl(url: string): boolean {
  let path: string;
  try {
    path = new URL(url).pathname;
  } catch {
    return false;
  }
  try {
    path = decodeURIComponent(path);
  } catch {
    // an escape that does not decode stays as it is
  }
  return /^\/+__mockapi(\/|$)/i.test(path);
}

/**
 * The request's context with `response` beside it. The parts the request's context works out on
 * first read (params, query, cookies, the random source) are read through it when a template
 * reads them, never up front: a `send` whose data has no `${…}` parses nothing and seeds nothing.
 */
class SendContext {
  private value: { read: unknown } | undefined;
  readonly headers: RequestContext['headers'];
  readonly body: RequestContext['body'];
  readonly request: RequestContext['request'];
  readonly state: RequestContext['state'];
  readonly now: RequestContext['now'];
  constructor(
    private readonly ctx: RequestContext,
    private readonly answer: () => unknown,
  ) {
    this.headers = ctx.headers;
    this.body = ctx.body;
    this.request = ctx.request;
    this.state = ctx.state;
    this.now = ctx.now;
  }

  get params(): RequestContext['params'] {
    return this.ctx.params;
  }

  get query(): RequestContext['query'] {
    return this.ctx.query;
  }

  get cookies(): RequestContext['cookies'] {
    return this.ctx.cookies;
  }

  get random(): RequestContext['random'] {
    return this.ctx.random;
  }

  get response(): unknown {
    return (this.value ??= { read: this.answer() }).read;
  }
}

/**
 * The request's context with `response` beside it, read once (the lazy context parses on first
 * read); the answer is decoded (and parsed) only when a template reads `${response.*}`.
 */
export function sendContext(
  ctx: RequestContext,
  response: () => unknown,
): RequestContext & { readonly response: unknown } {
  return new SendContext(ctx, response);
}

const staticTexts = new WeakMap<CompiledEvent, string | null>();

/**
 * The JSON text of an event's data when a `send` adds none and the template has no `${…}`: the
 * same for every event, so it is written once per compiled template (a reload compiles anew).
 * Undefined when the data depends on the request or the answer.
 */
export function staticDataText(template: CompiledEvent, send: CompiledSend): string | undefined {
  if (send.data !== undefined || (template.data !== undefined && !template.data.static)) return undefined;
  let text = staticTexts.get(template);
  if (text === undefined)
    staticTexts.set(
      template,
      (text = (JSON.stringify(template.data?.evaluate(emptyContext(0)) ?? {}) as string | undefined) ?? null),
    );
  return text ?? undefined;
}

/** Evaluates each `send` of an answer against the request and the answer, in the config now served. */
export function prepareSends(
  webhooks: CompiledWebhooks | undefined,
  sends: readonly CompiledSend[],
  ctx: RequestContext,
  response: () => unknown,
  endpoint: string | null,
  session = '',
): PreparedSend[] {
  const context = sendContext(ctx, response);
  return sends.map((send): PreparedSend => {
    const template = webhooks?.events.get(send.event);
    if (webhooks === undefined || template === undefined)
      return { problem: `webhook ${send.event}: no such event in the config now served` };
    if (!webhooks.targets.has(send.to))
      return { problem: `webhook ${send.event}: no target "${send.to}" in the config now served` };
    const dataText = staticDataText(template, send);
    let data: unknown;
    try {
      data = mergeData(template.data?.evaluate(context), send.data?.evaluate(context));
    } catch (err) {
      return { problem: `webhook ${send.event}: ${(err as Error).message}` };
    }
    let url: string | undefined;
    if (send.url !== undefined) {
      const value = send.url.evaluate(context);
      url = value === undefined || value === null ? '' : String(value);
      if (send.url.kind !== 'constant' && !isLoopbackUrl(url))
        return {
          problem: `webhook ${send.event}: a URL taken from the request may reach only loopback addresses, not ${JSON.stringify(url)}`,
        };
      if (isAdminUrl(url))
        return {
          problem: `webhook ${send.event}: a delivery never goes to a mockapi admin API (/__mockapi/), not ${JSON.stringify(url)}`,
        };
    }
    // One shape for every event (no spreads of optional parts): this runs for every answer with a send.
    return {
      send,
      event: { type: send.event, envelope: template.envelope, data, dataText, target: send.to, url, endpoint, session },
    };
  });
}
