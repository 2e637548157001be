import type { AnswerRandom, RequestContext } from '../expression/context.js';
import type { ExpressionOptions } from '../expression/compile.js';
import { compileString, type CompiledString } from '../expression/string-template.js';
import { textOf } from '../expression/values.js';
import { compileTemplate, type CompiledTemplate } from '../expression/template.js';
import type { DelayShape } from '../config/units.js';
import { shapeDelay } from '../pipeline/resilience.js';
import { frameEvent, STREAM_CONTENT_TYPES } from './frame.js';
import type { StreamConfig, StreamFaultConfig } from '../config/stream-model.js';
import { MAX_ANSWER_ITEMS, MAX_ANSWER_TEXT } from '../expression/template.js';
import { presetFramer } from './preset-frame.js';
import { chunkBounds, chunkText, presetEventCount } from '../config/stream-text.js';
import { DEFAULT_MODEL, presetError, presetParts, presetUsage, promptTokens, type PlainEvent } from './presets.js';
import { presetTemplate } from './preset-template.js';

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

/**
 * One request's stream, ready to write: its events are framed one at a time as they are sent
 * (`chunk(i)`), never all before the first. A stream over the answer caps (more than
 * {@link MAX_ANSWER_ITEMS} events, or more than {@link MAX_ANSWER_TEXT} characters framed) has
 * `problem` instead, said before anything is written.
 */
export interface RenderedStream {
  /** How many events. */
  readonly count: number;
  /** Event `i` in its framing (made when asked: the writer asks as it sends). */
  chunk(i: number): string;
  /** Every event framed (tests, outlines): made when read. */
  readonly chunks: readonly string[];
  /** All the events as one text (a network fault acts on the whole stream's bytes). */
  text(): string;
  /** Why the stream cannot be sent (over the answer caps): the 500's message. */
  readonly problem?: string;
  /** Milliseconds to wait before each event; `waits[0]` is the wait before the head (first byte). */
  readonly waits: readonly number[];
  /** The framed error event an `error` fault sends. */
  errorChunk(fault: StreamFaultConfig): string;
  /**
   * All the events as one text and its bytes, when they are the same for every request and all
   * due with the first one (`gap: 0`, no expression): written at once without framing anything.
   */
  readonly whole?: { readonly text: string; readonly bytes: Buffer };
  /**
   * The `usage` the stream carried once `sent` of its events went out (merged as a client reads it):
   * what a cost's settle reads as `response.body.usage`. Undefined when it carried none.
   */
  usage?(sent: number): Readonly<Record<string, unknown>> | undefined;
}

/** `rendered` with the usage its events carry (set on the fresh object: a spread would frame a lazy stream's events). */
function carrying(
  rendered: RenderedStream,
  usage: (sent: number) => Readonly<Record<string, unknown>> | undefined,
): RenderedStream {
  (rendered as { usage?: RenderedStream['usage'] }).usage = usage;
  return rendered;
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
  if (body !== null && typeof body === 'object' && typeof body.model === 'string' && body.model !== '')
    return body.model;
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
    for (let i = 0; i < count; i++)
      out.push(i === 0 ? waitOf(config.firstByte, random) : (gaps[i] ?? waitOf(config.gap, random)));
    return out;
  };
  const common = {
    config,
    contentType: STREAM_CONTENT_TYPES[format],
    ...(config.faults === undefined ? {} : { faults: config.faults }),
  };

  if (config.preset !== undefined) {
    const preset = config.preset;
    const text = str(config.text ?? '') as CompiledString;
    // Text without expressions is split once, here.
    const fixedChunks =
      text.kind === 'constant'
        ? chunkText(textOf(text.evaluate(undefined as unknown as RequestContext)), config.chunkBy)
        : undefined;
    // ... and framed once, with only the stream's id, time and model left to fill in per request;
    // so are its waits when no latency shape draws them.
    const template =
      fixedChunks === undefined ? undefined : presetTemplate(preset, fixedChunks, config.finishReason, frame);
    // openai-chat's usage chunk, sent when the request asks for it: a template of its own, made on first use.
    let usageTemplate: ReturnType<typeof presetTemplate> | null = null;
    const withUsage = () =>
      (usageTemplate ??=
        fixedChunks === undefined ? undefined : presetTemplate(preset, fixedChunks, config.finishReason, frame, true));
    const constantWaits = fixedChunks !== undefined && isConstant(config.firstByte) && isConstant(config.gap);
    const fixedWaits = constantWaits ? waits(presetEventCount(preset, fixedChunks.length), [], NO_DRAWS) : undefined;
    const fixedUsageWaits =
      constantWaits && preset === 'openai-chat'
        ? waits(presetEventCount(preset, fixedChunks.length, true), [], NO_DRAWS)
        : undefined;
    return {
      ...common,
      usesFaker,
      readsBody: true,
      render(ctx, timing) {
        const includeUsage = preset === 'openai-chat' && wantsUsage(ctx.body);
        const vars = {
          id: randomId(timing),
          created: Math.floor(ctx.now / 1000),
          model: modelOf(ctx, config.model),
          inputTokens: promptTokens(preset, ctx.body),
          includeUsage,
        };
        const constant = includeUsage ? fixedUsageWaits : fixedWaits;
        const fixedTemplate = includeUsage ? withUsage() : template;
        let count: number;
        let at: (i: number) => string;
        let chunkCount: number;
        if (fixedTemplate !== undefined) {
          // Its length is known without framing it: only a request's model can make it large.
          if (fixedTemplate.count > MAX_ANSWER_ITEMS)
            return tooLarge(
              `The answer is too large: its stream would have more than ${MAX_ANSWER_ITEMS} events`,
              errorChunk,
            );
          if (fixedTemplate.length(vars) > MAX_ANSWER_TEXT)
            return tooLarge(
              `The answer is too large: its stream would be longer than ${MAX_ANSWER_TEXT / 1024 / 1024} MiB`,
              errorChunk,
            );
          const outputs = (fixedChunks as string[]).length;
          return carrying(
            sized(
              fixedTemplate.count,
              fixedTemplate.filler(vars),
              constant ?? waits(fixedTemplate.count, [], timing),
              errorChunk,
            ),
            (sent) => presetUsage(preset, outputs, vars, sent),
          );
        } else {
          const whole = fixedChunks === undefined ? textOf(text.evaluate(ctx)) : fixedChunks.join('');
          if (whole.length > MAX_ANSWER_TEXT)
            return tooLarge(
              `The answer is too large: its stream's text would be longer than ${MAX_ANSWER_TEXT / 1024 / 1024} MiB`,
              errorChunk,
            );
          const bounds = fixedChunks === undefined ? chunkBounds(whole, config.chunkBy, MAX_ANSWER_ITEMS) : undefined;
          if (fixedChunks === undefined && bounds === undefined)
            return tooLarge(
              `The answer is too large: its stream would have more than ${MAX_ANSWER_ITEMS} events`,
              errorChunk,
            );
          chunkCount = fixedChunks?.length ?? (bounds as number[]).length - 1;
          const chunkAt =
            fixedChunks !== undefined
              ? (j: number) => fixedChunks[j] as string
              : (j: number) => whole.slice((bounds as number[])[j], (bounds as number[])[j + 1]);
          count = presetEventCount(preset, chunkCount, includeUsage);
          at = presetFramer(
            presetParts(preset, { length: chunkCount, join: () => whole }, vars, config.finishReason),
            chunkCount,
            chunkAt,
            frame,
          );
        }
        const outputs = chunkCount;
        return carrying(lazyStream(count, at, constant ?? waits(count, [], timing), errorChunk), (sent) =>
          presetUsage(preset, outputs, vars, sent),
        );
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
  const fixed = events.map((e) =>
    isFixed(e) ? frame(plainEvent(e, undefined as unknown as RequestContext)) : undefined,
  );
  const allFixed = fixed.every((chunk) => chunk !== undefined) ? (fixed as string[]) : undefined;
  const fixedWaits =
    isConstant(config.firstByte) && isConstant(config.gap) ? waits(events.length, gaps, NO_DRAWS) : undefined;
  const atOnce =
    allFixed !== undefined && fixedWaits !== undefined && fixedWaits.every((wait, i) => i === 0 || wait <= 0);
  const text = atOnce ? allFixed.join('') : '';
  const whole = atOnce ? { whole: { text, bytes: Buffer.from(text) } } : {};
  // Events that may carry a `usage` (a cost's settle reads it): looked for only in a stream that names one.
  const mayCarryUsage = JSON.stringify(config.events).includes('usage');
  const fixedUsage =
    mayCarryUsage && allFixed !== undefined
      ? events.map((e) => usageIn(plainEvent(e, undefined as unknown as RequestContext).data))
      : undefined;
  const fixedCarried = fixedUsage === undefined ? {} : { usage: (sent: number) => mergeUsage(fixedUsage, sent) };
  return {
    ...common,
    usesFaker,
    readsBody: false,
    render(ctx, timing) {
      if (allFixed !== undefined)
        return {
          ...eager(allFixed, fixedWaits ?? waits(allFixed.length, gaps, timing), errorChunk),
          ...whole,
          ...fixedCarried,
        };
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
          chunk ??= frame(plain);
        }
        length += chunk.length;
        if (length > MAX_ANSWER_TEXT)
          return tooLarge(
            `The answer is too large: its stream would be longer than ${MAX_ANSWER_TEXT / 1024 / 1024} MiB`,
            errorChunk,
          );
        chunks.push(chunk);
      }
      const rendered = eager(chunks, fixedWaits ?? waits(chunks.length, gaps, timing), errorChunk);
      return mayCarryUsage ? carrying(rendered, (sent) => mergeUsage(carried, sent)) : rendered;
    },
  };
}

/** Whether the request asks for openai-chat's usage chunk (`stream_options.include_usage`). */
function wantsUsage(body: unknown): boolean {
  const options =
    body !== null && typeof body === 'object' ? (body as { stream_options?: unknown }).stream_options : undefined;
  return (
    options !== null && typeof options === 'object' && (options as { include_usage?: unknown }).include_usage === true
  );
}

/** The `usage` an event's data carries: its own, or its `message`'s or `response`'s (Anthropic's and the Responses API's events). */
function usageIn(data: unknown): Record<string, unknown> | undefined {
  if (data === null || typeof data !== 'object') return undefined;
  const d = data as Record<string, unknown>;
  for (const holder of [d, d.message, d.response]) {
    const usage = holder !== null && typeof holder === 'object' ? (holder as Record<string, unknown>).usage : undefined;
    if (usage !== null && typeof usage === 'object' && !Array.isArray(usage)) return usage as Record<string, unknown>;
  }
  return undefined;
}

/** The usages of the first `sent` events merged, later fields over earlier ones; undefined when none carried one. */
function mergeUsage(
  carried: ReadonlyArray<Record<string, unknown> | undefined>,
  sent: number,
): Record<string, unknown> | undefined {
  let merged: Record<string, unknown> | undefined;
  for (let i = 0; i < Math.min(sent, carried.length); i++)
    if (carried[i] !== undefined) merged = { ...merged, ...carried[i] };
  return merged;
}

/** A stream whose events are framed already. */
export function eager(
  chunks: readonly string[],
  waits: readonly number[],
  errorChunk: RenderedStream['errorChunk'],
): RenderedStream {
  return {
    count: chunks.length,
    chunk: (i) => chunks[i] as string,
    chunks,
    text: () => chunks.join(''),
    waits,
    errorChunk,
  };
}

/** A stream over the answer caps: nothing to send, the 500 says why. */
function tooLarge(problem: string, errorChunk: RenderedStream['errorChunk']): RenderedStream {
  return { count: 0, chunk: () => '', chunks: [], text: () => '', waits: [0], errorChunk, problem };
}

/**
 * A stream framed event by event as it is sent. Its framed length is checked first, framing and
 * dropping each event (a request's `model` is in every event, a request's text in the chunks),
 * stopping at the cap: what is over it costs at most that much work, and nothing is kept.
 */
function lazyStream(
  count: number,
  at: (i: number) => string,
  waits: readonly number[],
  errorChunk: RenderedStream['errorChunk'],
): RenderedStream {
  if (count > MAX_ANSWER_ITEMS)
    return tooLarge(`The answer is too large: its stream would have more than ${MAX_ANSWER_ITEMS} events`, errorChunk);
  let length = 0;
  for (let i = 0; i < count; i++) {
    length += at(i).length;
    if (length > MAX_ANSWER_TEXT)
      return tooLarge(
        `The answer is too large: its stream would be longer than ${MAX_ANSWER_TEXT / 1024 / 1024} MiB`,
        errorChunk,
      );
  }
  return sized(count, at, waits, errorChunk);
}

/** A stream known to be within the caps, framed event by event as it is sent. */
function sized(
  count: number,
  at: (i: number) => string,
  waits: readonly number[],
  errorChunk: RenderedStream['errorChunk'],
): RenderedStream {
  const all = (): string[] => Array.from({ length: count }, (_, i) => at(i));
  return {
    count,
    chunk: at,
    get chunks() {
      return all();
    },
    text: () => all().join(''),
    waits,
    errorChunk,
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
  return (
    [e.event, e.id, e.comment].every((s) => s === undefined || s.kind === 'constant') &&
    (e.data === undefined || e.data.static)
  );
}

/** What a stream fault does to one stream: how many events go out before it, then what. */
export interface StreamFaultPlan {
  readonly fault: StreamFaultConfig;
  /** Events sent before the fault acts. */
  readonly after: number;
}

/** The fault's place in `rendered`: after `afterEvents`, or after the events due before `afterMs`. */
export function placeFault(fault: StreamFaultConfig, rendered: RenderedStream): StreamFaultPlan {
  const total = rendered.count;
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
