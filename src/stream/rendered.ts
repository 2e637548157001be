/**
 * One request's stream, ready to write ({@link RenderedStream}), and the ways one is made: framed
 * already ({@link eager}), framed event by event as it is sent (`lazyStream`, `sized`), or over the
 * answer caps with nothing to send (`tooLarge`). Also where a stream fault falls in a rendered
 * stream ({@link placeFault}). The compile step (compile.ts, compile-preset.ts) builds these; the
 * writer (writer.ts) and the answer step (answer.ts) read them.
 */
import type { StreamFaultConfig } from '../config/stream-model.js';
import { MAX_ANSWER_ITEMS, MAX_ANSWER_TEXT } from '../expression/template.js';

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

/** The 500's message for a stream of more than {@link MAX_ANSWER_ITEMS} events. */
export const TOO_MANY_EVENTS = `The answer is too large: its stream would have more than ${MAX_ANSWER_ITEMS} events`;
/** The 500's message for a stream longer than {@link MAX_ANSWER_TEXT} characters framed. */
export const TOO_LONG = `The answer is too large: its stream would be longer than ${MAX_ANSWER_TEXT / 1024 / 1024} MiB`;

/** `rendered` with the usage its events carry (set on the fresh object: a spread would frame a lazy stream's events). */
export function carrying(
  rendered: RenderedStream,
  usage: (sent: number) => Readonly<Record<string, unknown>> | undefined,
): RenderedStream {
  (rendered as { usage?: RenderedStream['usage'] }).usage = usage;
  return rendered;
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
export function tooLarge(problem: string, errorChunk: RenderedStream['errorChunk']): RenderedStream {
  return { count: 0, chunk: () => '', chunks: [], text: () => '', waits: [0], errorChunk, problem };
}

/**
 * A stream framed event by event as it is sent. Its framed length is checked first, framing and
 * dropping each event (a request's `model` is in every event, a request's text in the chunks),
 * stopping at the cap: what is over it costs at most that much work, and nothing is kept.
 */
export function lazyStream(
  count: number,
  at: (i: number) => string,
  waits: readonly number[],
  errorChunk: RenderedStream['errorChunk'],
): RenderedStream {
  if (count > MAX_ANSWER_ITEMS) return tooLarge(TOO_MANY_EVENTS, errorChunk);
  let length = 0;
  for (let i = 0; i < count; i++) {
    length += at(i).length;
    if (length > MAX_ANSWER_TEXT) return tooLarge(TOO_LONG, errorChunk);
  }
  return sized(count, at, waits, errorChunk);
}

/** A stream known to be within the caps, framed event by event as it is sent. */
export function sized(
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
