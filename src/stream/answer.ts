import { createAnswerRandom } from '../seeded.js';
import type { PreparedStream, StreamAnswers } from '../http/dynamic-answer.js';
import type { Reply } from '../http/reply.js';
import type { FailureSource } from '../pipeline/failure.js';
import type { ResilienceSource } from '../pipeline/resilience.js';
import { placeFault, type RenderedStream, type StreamFaultPlan } from './rendered.js';
import type { StreamFaultConfig } from '../config/stream-model.js';
import { startStream } from './writer.js';

export interface StreamAnswerParts {
  reply: Reply;
  /** Read on every request: a reload that changes the seed swaps it. */
  readonly failures: FailureSource;
  /** The fault streams of the answer step, kept across reloads. */
  resilience: ResilienceSource;
}

/** One request's stream and its fault (at most one fault a request: none when a network fault was drawn). */
class RenderedAnswerStream implements PreparedStream {
  constructor(
    readonly rendered: RenderedStream,
    readonly fault: StreamFaultPlan | undefined,
  ) {}

  get problem(): string | undefined {
    return this.rendered.problem;
  }

  text(): string {
    return this.rendered.text();
  }

  get events(): number {
    return this.rendered.count;
  }

  eventsIn(bytes: number): number {
    let end = 0;
    for (let i = 0; i < this.rendered.count; i++) {
      end += Buffer.byteLength(this.rendered.chunk(i));
      if (end > bytes) return i;
    }
    return this.rendered.count;
  }
}

/**
 * Streamed answers (`stream:`) for the answer step: rendered on arrival — events, and waits drawn
 * from a seeded source of their own (seed, endpoint, answer, request number), so with a seed the
 * n-th stream of an endpoint has the same events at the same offsets; the stream fault is drawn
 * here too, like other faults — then written over time (writer.ts), journaled and logged when it ends.
 */
export function streamAnswers(p: StreamAnswerParts): StreamAnswers {
  const { reply } = p;
  return {
    render(leaf, endpoint, ctx) {
      const plan = leaf.stream!;
      const seed = p.failures.seed;
      const timing = createAnswerRandom(seed, `${endpoint.key}\u0000stream\u0000${leaf.label}`, ctx.request);
      const rendered = plan.render(ctx, timing);
      const fault =
        plan.faults === undefined
          ? undefined
          : (p.resilience.fault(seed, `${endpoint.key} ${leaf.label} stream`, plan.faults as never) as unknown as
              StreamFaultConfig | undefined);
      return new RenderedAnswerStream(rendered, fault === undefined ? undefined : placeFault(fault, rendered));
    },

    send(x, status, headers, stream, complete) {
      const { rendered, fault } = stream as RenderedAnswerStream;
      reply.retryAfters.answered(x, status, headers);
      if (x.started === 0) x.started = performance.now();
      startStream({
        res: x.res,
        status,
        headers,
        rendered,
        headOnly: x.method === 'HEAD',
        started: x.started,
        ...(fault === undefined ? {} : { fault }),
        onEnd(summary, written, notes) {
          x.stream = summary;
          // What a cost's settle reads: the usage the events sent carried.
          if (x.afterAnswer !== undefined) {
            const usage = rendered.usage?.(summary.sent);
            if (usage !== undefined) x.usage = usage;
          }
          // Webhooks fire for a stream that sent all its events, as for any answer once sent (the journal entry names them).
          if (complete !== undefined && summary.ended === 'complete') complete();
          reply.ended(
            x,
            'response',
            status,
            headers,
            written,
            notes.length === 0 ? undefined : notes.join('; '),
            summary.ms,
          );
        },
      });
    },
  };
}
