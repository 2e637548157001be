/**
 * A `stream:` answer compiled once per load into a {@link StreamPlan}: its content type, its
 * faults, and how each request renders its events. A provider's preset is compiled in
 * compile-preset.ts; explicit `events` here — each event's strings and data compiled once, and
 * framed once at load when they hold no expression. The rendered stream itself is in rendered.ts.
 */
import type { AnswerRandom, RequestContext } from '../expression/context.js';
import type { ExpressionOptions } from '../expression/compile.js';
import type { CompiledString } from '../expression/string-template.js';
import { textOf } from '../expression/values.js';
import { compileTemplate, type CompiledTemplate } from '../expression/template.js';
import { MAX_ANSWER_TEXT } from '../expression/template.js';
import { STREAM_CONTENT_TYPES } from './frame.js';
import type { StreamConfig, StreamEventConfig, StreamFaultConfig } from '../config/stream-model.js';
import type { PlainEvent } from './presets.js';
import { carrying, eager, tooLarge, TOO_LONG, type RenderedStream } from './rendered.js';
import { NO_REQUEST, streamKit, type StreamKit, type StreamRender } from './compile-kit.js';
import { presetRender } from './compile-preset.js';
import { mergeUsage, usageIn } from './usage.js';

declare module '../answer/parts.js' {
  interface LeafParts {
    /** A `stream:` answer: its events, written over time by src/stream/writer.ts. */
    readonly stream?: StreamPlan;
  }
}

/** A stream compiled once per load: `render` makes one request's events and their timing. */
export interface StreamPlan {
  readonly config: StreamConfig;
  readonly contentType: string;
  readonly usesFaker: boolean;
  /** A preset echoes the request's `model`: the endpoint reads request bodies. */
  readonly readsBody: boolean;
  readonly faults?: readonly StreamFaultConfig[];
  /** One request's stream; `timing` draws the waits (seeded per endpoint and request). */
  render(ctx: RequestContext, timing: AnswerRandom): RenderedStream;
}

/** An explicit event compiled: each field a compiled string or template. */
interface CompiledEvent {
  event?: CompiledString;
  id?: CompiledString;
  comment?: CompiledString;
  data?: CompiledTemplate;
  gapMs?: number;
}

/** Compiles a validated stream (its expressions were checked by the stream rules). */
export function compileStream(config: StreamConfig, options: ExpressionOptions): StreamPlan {
  const kit = streamKit(config, options);
  const render = config.preset !== undefined ? presetRender(config, config.preset, kit) : eventsRender(config, kit);
  return {
    config,
    contentType: STREAM_CONTENT_TYPES[config.format],
    ...(config.faults === undefined ? {} : { faults: config.faults }),
    usesFaker: kit.usesFaker,
    readsBody: config.preset !== undefined,
    render,
  };
}

/** Compiles a stream of explicit events: how each request renders it. */
function eventsRender(config: StreamConfig, kit: StreamKit): StreamRender {
  const events = config.events.map((e) => compileEvent(e, kit));
  const gaps = events.map((e) => e.gapMs);
  // An event without expressions is framed once, here; so are the waits when no latency shape draws them.
  const fixed = events.map((e) => (isFixed(e) ? kit.frame(plainEvent(e, NO_REQUEST)) : undefined));
  const fixedWaits = kit.fixedWaits(events.length, gaps);
  // Events that may carry a `usage` (a cost's settle reads it): looked for only in a stream that names one.
  const mayCarryUsage = JSON.stringify(config.events).includes('usage');
  if (fixed.every((chunk) => chunk !== undefined))
    return fixedEventsRender(events, fixed as string[], fixedWaits, mayCarryUsage, kit);
  return (ctx, timing) => {
    // Events are few (the config lists them) but each may hold a request's value: their text
    // together is capped, checked as each is framed.
    const chunks: string[] = [];
    let length = 0;
    const carried: Array<Record<string, unknown> | undefined> = [];
    for (const [i, e] of events.entries()) {
      let chunk = fixed[i];
      if (chunk === undefined || mayCarryUsage) {
        const plain = plainEvent(e, ctx);
        if (mayCarryUsage) carried[i] = usageIn(plain.data);
        chunk ??= kit.frame(plain);
      }
      length += chunk.length;
      if (length > MAX_ANSWER_TEXT) return tooLarge(TOO_LONG, kit.errorChunk);
      chunks.push(chunk);
    }
    const rendered = eager(chunks, fixedWaits ?? kit.waits(chunks.length, gaps, timing), kit.errorChunk);
    return mayCarryUsage ? carrying(rendered, (sent) => mergeUsage(carried, sent)) : rendered;
  };
}

/** Events the same for every request, framed at load: sent as one write when all are due at once. */
function fixedEventsRender(
  events: readonly CompiledEvent[],
  chunks: readonly string[],
  fixedWaits: readonly number[] | undefined,
  mayCarryUsage: boolean,
  kit: StreamKit,
): StreamRender {
  const gaps = events.map((e) => e.gapMs);
  const atOnce = fixedWaits !== undefined && fixedWaits.every((wait, i) => i === 0 || wait <= 0);
  const text = atOnce ? chunks.join('') : '';
  const whole = atOnce ? { whole: { text, bytes: Buffer.from(text) } } : {};
  const usages = mayCarryUsage ? events.map((e) => usageIn(plainEvent(e, NO_REQUEST).data)) : undefined;
  const carried = usages === undefined ? {} : { usage: (sent: number) => mergeUsage(usages, sent) };
  return (_ctx, timing) => ({
    ...eager(chunks, fixedWaits ?? kit.waits(chunks.length, gaps, timing), kit.errorChunk),
    ...whole,
    ...carried,
  });
}

function compileEvent(e: StreamEventConfig, kit: StreamKit): CompiledEvent {
  const compiled: CompiledEvent = {};
  const event = kit.str(e.event);
  const id = kit.str(e.id);
  const comment = kit.str(e.comment);
  if (event !== undefined) compiled.event = event;
  if (id !== undefined) compiled.id = id;
  if (comment !== undefined) compiled.comment = comment;
  if (e.data !== undefined) {
    const data = compileTemplate(e.data, kit.options);
    if (!data.ok) throw new Error(`unvalidated stream data: ${data.issues[0]?.message ?? ''}`);
    kit.usesFaker ||= data.value.usesFaker;
    compiled.data = data.value;
  }
  if (e.gapMs !== undefined) compiled.gapMs = e.gapMs;
  return compiled;
}

/** An explicit event for one request: its fields evaluated. */
function plainEvent(e: CompiledEvent, ctx: RequestContext): PlainEvent {
  const plain: PlainEvent = {};
  if (e.event !== undefined) plain.event = textOf(e.event.evaluate(ctx));
  if (e.id !== undefined) plain.id = textOf(e.id.evaluate(ctx));
  if (e.comment !== undefined) plain.comment = textOf(e.comment.evaluate(ctx));
  if (e.data !== undefined) plain.data = e.data.evaluate(ctx);
  return plain;
}

/** Whether an event is the same for every request (no expressions): its strings constant, its data static. */
function isFixed(e: CompiledEvent): boolean {
  return (
    [e.event, e.id, e.comment].every((s) => s === undefined || s.kind === 'constant') &&
    (e.data === undefined || e.data.static)
  );
}
