/**
 * What both kinds of stream compile share (explicit events in compile.ts, a provider's preset in
 * compile-preset.ts): the stream's framing and error event, its strings compiled once with a note
 * of whether any uses faker, and its waits — drawn per request from the latency shapes, or worked
 * out once at load when no shape draws them.
 */
import type { AnswerRandom, RequestContext } from '../expression/context.js';
import type { ExpressionOptions } from '../expression/compile.js';
import { compileString, type CompiledString } from '../expression/string-template.js';
import type { DelayShape } from '../config/units.js';
import { shapeDelay } from '../pipeline/resilience.js';
import type { StreamConfig, StreamFaultConfig } from '../config/stream-model.js';
import { frameEvent } from './frame.js';
import { presetError, type PlainEvent } from './presets.js';
import type { RenderedStream } from './rendered.js';

/** One request's stream from a compiled one; `timing` draws the waits (seeded per endpoint and request). */
export type StreamRender = (ctx: RequestContext, timing: AnswerRandom) => RenderedStream;

/** The context a fixed string or event is evaluated with at load: it reads nothing of a request. */
export const NO_REQUEST = undefined as unknown as RequestContext;

/** The shared parts of one stream's compile. */
export interface StreamKit {
  readonly options: ExpressionOptions;
  /** Set once a compiled string or template uses faker. */
  usesFaker: boolean;
  /** Frames one event in the stream's format. */
  frame(e: PlainEvent): string;
  /** Compiles one of the stream's strings (undefined stays undefined). */
  str(text: string | undefined): CompiledString | undefined;
  /** The framed error event an `error` fault sends. */
  errorChunk(fault: StreamFaultConfig): string;
  /** The wait before each of `count` events: the first byte's, then each event's own gap or the stream's. */
  waits(count: number, gaps: ReadonlyArray<number | undefined>, random: AnswerRandom): number[];
  /** The same worked out once, when no latency shape draws them; undefined when one does. */
  fixedWaits(count: number, gaps: ReadonlyArray<number | undefined>): number[] | undefined;
}

/** The kit for compiling `config`'s stream. */
export function streamKit(config: StreamConfig, options: ExpressionOptions): StreamKit {
  const frame = (e: PlainEvent): string => frameEvent(config.format, e);
  const waits: StreamKit['waits'] = (count, gaps, random) => {
    const out: number[] = [];
    for (let i = 0; i < count; i++)
      out.push(i === 0 ? waitOf(config.firstByte, random) : (gaps[i] ?? waitOf(config.gap, random)));
    return out;
  };
  const constant = isConstant(config.firstByte) && isConstant(config.gap);
  const kit: StreamKit = {
    options,
    usesFaker: false,
    frame,
    str(text) {
      if (text === undefined) return undefined;
      const compiled = compiledOrThrow(text, options);
      kit.usesFaker ||= compiled.usesFaker;
      return compiled;
    },
    errorChunk(fault) {
      const base = presetError(config.preset);
      return frame(fault.data === undefined ? base : { ...base, data: fault.data });
    },
    waits,
    fixedWaits: (count, gaps) => (constant ? waits(count, gaps, NO_DRAWS) : undefined),
  };
  return kit;
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
