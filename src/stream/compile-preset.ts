/**
 * A provider's preset stream compiled (openai-chat, openai-responses, anthropic): its `text` cut
 * into chunks and framed in the provider's events. Text without expressions is cut and framed once
 * at load, leaving each request only its id, time and model to fill in; text with expressions is
 * cut per request and framed event by event as it is sent. Either way the answer caps are checked
 * before anything is written, and the stream carries the usage the provider would report.
 */
import type { AnswerRandom, RequestContext } from '../expression/context.js';
import type { CompiledString } from '../expression/string-template.js';
import { textOf } from '../expression/values.js';
import { MAX_ANSWER_ITEMS, MAX_ANSWER_TEXT } from '../expression/template.js';
import type { StreamConfig, StreamPreset } from '../config/stream-model.js';
import { chunkBounds, chunkText, presetEventCount } from '../config/stream-text.js';
import { presetFramer } from './preset-frame.js';
import { presetTemplate, type PresetTemplate } from './preset-template.js';
import { DEFAULT_MODEL, presetParts, presetUsage, promptTokens, type PresetVars } from './presets.js';
import { carrying, lazyStream, sized, tooLarge, TOO_LONG, TOO_MANY_EVENTS, type RenderedStream } from './rendered.js';
import { NO_REQUEST, type StreamKit, type StreamRender } from './compile-kit.js';
import { wantsUsage } from './usage.js';

/** A preset's text fixed at load: cut and framed once, with and without openai-chat's usage chunk. */
interface FixedPreset {
  readonly chunks: readonly string[];
  /** The events framed once (undefined when they must be framed per request). */
  template(includeUsage: boolean): PresetTemplate | undefined;
  /** The waits, when no latency shape draws them. */
  waits(includeUsage: boolean): number[] | undefined;
}

/** Compiles a validated preset stream: how each request renders it. */
export function presetRender(config: StreamConfig, preset: StreamPreset, kit: StreamKit): StreamRender {
  const text = kit.str(config.text ?? '') as CompiledString;
  // Text without expressions is split once, here.
  const fixed =
    text.kind === 'constant'
      ? fixedPreset(config, preset, chunkText(textOf(text.evaluate(NO_REQUEST)), config.chunkBy), kit)
      : undefined;
  return (ctx, timing) => {
    const includeUsage = preset === 'openai-chat' && wantsUsage(ctx.body);
    const vars: PresetVars = {
      id: randomId(timing),
      created: Math.floor(ctx.now / 1000),
      model: modelOf(ctx, config.model),
      inputTokens: promptTokens(preset, ctx.body),
      includeUsage,
    };
    const constant = fixed?.waits(includeUsage);
    const waitsFor = (count: number): readonly number[] => constant ?? kit.waits(count, [], timing);
    const template = fixed?.template(includeUsage);
    if (template !== undefined) return fromTemplate(template, vars, (fixed as FixedPreset).chunks.length, waitsFor);
    const whole = fixed === undefined ? textOf(text.evaluate(ctx)) : fixed.chunks.join('');
    return framedAsSent(whole, fixed?.chunks, vars, waitsFor);
  };

  /** A stream from its template framed once: its size is known without framing it. */
  function fromTemplate(
    template: PresetTemplate,
    vars: PresetVars,
    outputs: number,
    waitsFor: (count: number) => readonly number[],
  ): RenderedStream {
    // Only a request's model can make it large.
    if (template.count > MAX_ANSWER_ITEMS) return tooLarge(TOO_MANY_EVENTS, kit.errorChunk);
    if (template.length(vars) > MAX_ANSWER_TEXT) return tooLarge(TOO_LONG, kit.errorChunk);
    const stream = sized(template.count, template.filler(vars), waitsFor(template.count), kit.errorChunk);
    return carrying(stream, (sent) => presetUsage(preset, outputs, vars, sent));
  }

  /** A stream of `whole` cut into chunks (the fixed ones, or cut now), framed event by event as it is sent. */
  function framedAsSent(
    whole: string,
    fixedChunks: readonly string[] | undefined,
    vars: PresetVars,
    waitsFor: (count: number) => readonly number[],
  ): RenderedStream {
    if (whole.length > MAX_ANSWER_TEXT)
      return tooLarge(
        `The answer is too large: its stream's text would be longer than ${MAX_ANSWER_TEXT / 1024 / 1024} MiB`,
        kit.errorChunk,
      );
    const chunks = chunkView(whole, fixedChunks, config.chunkBy);
    if (chunks === undefined) return tooLarge(TOO_MANY_EVENTS, kit.errorChunk);
    const count = presetEventCount(preset, chunks.count, vars.includeUsage);
    const parts = presetParts(preset, { length: chunks.count, join: () => whole }, vars, config.finishReason);
    const at = presetFramer(parts, chunks.count, chunks.at, kit.frame);
    return carrying(lazyStream(count, at, waitsFor(count), kit.errorChunk), (sent) =>
      presetUsage(preset, chunks.count, vars, sent),
    );
  }
}

/** Fixed chunks framed once, with only the stream's id, time and model left to fill in per request; so are their waits when no latency shape draws them. */
function fixedPreset(
  config: StreamConfig,
  preset: StreamPreset,
  chunks: readonly string[],
  kit: StreamKit,
): FixedPreset {
  const template = presetTemplate(preset, chunks, config.finishReason, kit.frame);
  // openai-chat's usage chunk, sent when the request asks for it: a template of its own, made on first use.
  let usageTemplate: PresetTemplate | undefined | null = null;
  const waits = kit.fixedWaits(presetEventCount(preset, chunks.length), []);
  const usageWaits =
    preset === 'openai-chat' ? kit.fixedWaits(presetEventCount(preset, chunks.length, true), []) : undefined;
  return {
    chunks,
    template: (includeUsage) =>
      includeUsage
        ? (usageTemplate ??= presetTemplate(preset, chunks, config.finishReason, kit.frame, true))
        : template,
    waits: (includeUsage) => (includeUsage ? usageWaits : waits),
  };
}

/** `whole`'s chunks: the fixed ones, or cut now; undefined when there would be more than {@link MAX_ANSWER_ITEMS}. */
function chunkView(
  whole: string,
  fixed: readonly string[] | undefined,
  by: StreamConfig['chunkBy'],
): { readonly count: number; at(j: number): string } | undefined {
  if (fixed !== undefined) return { count: fixed.length, at: (j) => fixed[j] as string };
  const bounds = chunkBounds(whole, by, MAX_ANSWER_ITEMS);
  if (bounds === undefined) return undefined;
  return { count: bounds.length - 1, at: (j) => whole.slice(bounds[j], bounds[j + 1]) };
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
