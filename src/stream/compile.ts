import type { AnswerRandom, RequestContext } from '../answer/context.js';
import type { ExpressionOptions } from '../answer/expression/compile.js';
import { compileString, type CompiledString } from '../answer/expression/string-template.js';
import { textOf } from '../answer/expression/values.js';
import { compileTemplate, type CompiledTemplate } from '../answer/template.js';
import type { DelayShape } from '../config/units.js';
import { shapeDelay } from '../pipeline/resilience.js';
import { frameEvent, STREAM_CONTENT_TYPES } from './frame.js';
import type { StreamConfig, StreamFaultConfig } from './model.js';
import { framePreset } from './preset-frame.js';
import { chunkText, DEFAULT_MODEL, presetError, presetEventCount, presetParts, type PlainEvent } from './presets.js';
import { presetTemplate } from './preset-template.js';

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

/** One request's stream, ready to write. */
export interface RenderedStream {
  /** Each event in its framing. */
  readonly chunks: readonly string[];
  /** Milliseconds to wait before each event; `waits[0]` is the wait before the head (first byte). */
  readonly waits: readonly number[];
  /** The framed error event an `error` fault sends. */
  errorChunk(fault: StreamFaultConfig): string;
  /**
   * All the events as one text and its bytes, when they are the same for every request and all
   * due with the first one (`gap: 0`, no expression): written at once without framing anything.
   */
  readonly whole?: { readonly text: string; readonly bytes: Buffer };
}

/** An explicit event compiled: each field a compiled string or template. */
interface CompiledEvent {
  event?: CompiledString;
  id?: CompiledString;
  comment?: CompiledString;
  data?: CompiledTemplate;
  gapMs?: number;
}

function compiledOrThrow(text: string, options: ExpressionOptions): CompiledString {
  const result = compileString(text, options);
  // The stream rules compiled every string already: a failure here is a bug, not a config problem.
  if (!result.ok) throw new Error(`unvalidated stream expression ${JSON.stringify(text)}: ${result.issue.message}`);
  return result.value;
}

/** Whether a wait is the same for every stream (no latency shape to draw from). */
function isConstant(timing: number | DelayShape | undefined): boolean {
  return timing === undefined || typeof timing === 'number';
}

/** The source for waits that draw nothing: drawing from it is a bug. */
const NO_DRAWS: AnswerRandom = {
  next: () => {
    throw new Error('a constant wait drew a random number');
  },
  nextUint32: () => {
    throw new Error('a constant wait drew a random number');
  },
  fakerSeed: 0,
};

function waitOf(timing: number | DelayShape | undefined, random: AnswerRandom): number {
  if (timing === undefined) return 0;
  return typeof timing === 'number' ? timing : shapeDelay(timing, random.next());
}

/** Where the model a preset names comes from: the request's `model`, else the config's, else a default. */
function modelOf(ctx: RequestContext, fallback: string | undefined): string {
  const body = ctx.body as { model?: unknown } | undefined;
  if (body !== null && typeof body === 'object' && typeof body.model === 'string' && body.model !== '') return body.model;
  return fallback ?? DEFAULT_MODEL;
}

const ID_ALPHABET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';

function randomId(random: AnswerRandom): string {
  let id = '';
  for (let i = 0; i < 24; i++) id += ID_ALPHABET[random.nextUint32() % ID_ALPHABET.length];
  return id;
}

/** Compiles a validated stream (its expressions were checked by the stream rules). */
export function compileStream(config: StreamConfig, options: ExpressionOptions): StreamPlan {
  const format = config.format;
  const frame = (e: PlainEvent): string => frameEvent(format, e);
  let usesFaker = false;
  const str = (text: string | undefined): CompiledString | undefined => {
    if (text === undefined) return undefined;
    const compiled = compiledOrThrow(text, options);
    usesFaker ||= compiled.usesFaker;
    return compiled;
  };
  const errorChunk = (fault: StreamFaultConfig): string => {
    const base = presetError(config.preset);
    return frame(fault.data === undefined ? base : { ...base, data: fault.data });
  };
  const waits = (count: number, gaps: ReadonlyArray<number | undefined>, random: AnswerRandom): number[] => {
    const out: number[] = [];
    for (let i = 0; i < count; i++) out.push(i === 0 ? waitOf(config.firstByte, random) : (gaps[i] ?? waitOf(config.gap, random)));
    return out;
  };
  const common = { config, contentType: STREAM_CONTENT_TYPES[format], ...(config.faults === undefined ? {} : { faults: config.faults }) };

  if (config.preset !== undefined) {
    const preset = config.preset;
    const text = str(config.text ?? '') as CompiledString;
    // Text without expressions is split once, here.
    const fixedChunks = text.kind === 'constant' ? chunkText(textOf(text.evaluate(undefined as unknown as RequestContext)), config.chunkBy) : undefined;
    // ... and framed once, with only the stream's id, time and model left to fill in per request;
    // so are its waits when no latency shape draws them.
    const template = fixedChunks === undefined ? undefined : presetTemplate(preset, fixedChunks, config.finishReason, frame);
    const fixedWaits = fixedChunks !== undefined && isConstant(config.firstByte) && isConstant(config.gap) ? waits(presetEventCount(preset, fixedChunks.length), [], NO_DRAWS) : undefined;
    return {
      ...common,
      usesFaker,
      readsBody: true,
      render(ctx, timing) {
        const chunks = fixedChunks ?? chunkText(textOf(text.evaluate(ctx)), config.chunkBy);
        const vars = { id: randomId(timing), created: Math.floor(ctx.now / 1000), model: modelOf(ctx, config.model) };
        const events = template?.fill(vars) ?? framePreset(presetParts(preset, chunks, vars, config.finishReason), chunks, frame);
        return { chunks: events, waits: fixedWaits ?? waits(events.length, [], timing), errorChunk };
      },
    };
  }

  const events: CompiledEvent[] = config.events.map((e) => {
    const compiled: CompiledEvent = {};
    const event = str(e.event);
    const id = str(e.id);
    const comment = str(e.comment);
    if (event !== undefined) compiled.event = event;
    if (id !== undefined) compiled.id = id;
    if (comment !== undefined) compiled.comment = comment;
    if (e.data !== undefined) {
      const data = compileTemplate(e.data, options);
      if (!data.ok) throw new Error(`unvalidated stream data: ${data.issues[0]?.message ?? ''}`);
      usesFaker ||= data.value.usesFaker;
      compiled.data = data.value;
    }
    if (e.gapMs !== undefined) compiled.gapMs = e.gapMs;
    return compiled;
  });
  const gaps = events.map((e) => e.gapMs);
  // An event without expressions is framed once, here; so are the waits when no latency shape draws them.
  const fixed = events.map((e) => (isFixed(e) ? frame(plainEvent(e, undefined as unknown as RequestContext)) : undefined));
  const allFixed = fixed.every((chunk) => chunk !== undefined) ? (fixed as string[]) : undefined;
  const fixedWaits = isConstant(config.firstByte) && isConstant(config.gap) ? waits(events.length, gaps, NO_DRAWS) : undefined;
  const atOnce = allFixed !== undefined && fixedWaits !== undefined && fixedWaits.every((wait, i) => i === 0 || wait <= 0);
  const text = atOnce ? allFixed.join('') : '';
  const whole = atOnce ? { whole: { text, bytes: Buffer.from(text) } } : {};
  return {
    ...common,
    usesFaker,
    readsBody: false,
    render(ctx, timing) {
      const chunks = allFixed ?? events.map((e, i) => fixed[i] ?? frame(plainEvent(e, ctx)));
      return { chunks, waits: fixedWaits ?? waits(chunks.length, gaps, timing), errorChunk, ...whole };
    },
  };
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
  return [e.event, e.id, e.comment].every((s) => s === undefined || s.kind === 'constant') && (e.data === undefined || e.data.static);
}

/** What a stream fault does to one stream: how many events go out before it, then what. */
export interface StreamFaultPlan {
  readonly fault: StreamFaultConfig;
  /** Events sent before the fault acts. */
  readonly after: number;
}

/** The fault's place in `rendered`: after `afterEvents`, or after the events due before `afterMs`. */
export function placeFault(fault: StreamFaultConfig, rendered: RenderedStream): StreamFaultPlan {
  const total = rendered.chunks.length;
  if (fault.afterMs === undefined) return { fault, after: Math.min(fault.afterEvents ?? 0, total) };
  let at = 0;
  let count = 0;
  for (const wait of rendered.waits) {
    at += wait;
    if (at >= fault.afterMs) break;
    count++;
  }
  return { fault, after: count };
}
