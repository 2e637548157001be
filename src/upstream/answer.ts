import type { LimitVerdict } from '../pipeline/limits.js';
import type { UpstreamStep } from '../upstream/step.js';
import type { AnswerHeaders } from './answer-headers.js';
import type { AnswerWriter } from './answer-writer.js';
import type { Exchange } from './exchange.js';
import type { RequestLogger } from './request-log.js';

/** What the upstream step borrows from the handler. */
export interface UpstreamWriters extends Pick<AnswerWriter, 'send' | 'journaled' | 'failed' | 'respondOwn'>, Pick<AnswerHeaders, 'limitsOf'> {
  readonly requestLog: RequestLogger;
}

/**
 * The upstream step: the request goes to the real API; its answer (or a 502/504) is sent with the
 * mock's limit and CORS headers, which replace the upstream's headers of the same names.
 */
export function answerUpstream(x: Exchange, mockPath: string, verdict: LimitVerdict, upstream: UpstreamStep, writers: UpstreamWriters): void {
  const { send, limitsOf, failed } = writers;
  // The target as the client sent it (still percent-encoded), after `server.basePath` (`/mock`).
  const url = x.req.url ?? '';
  const base = x.compiled.basePath;
  const target = base === '' ? url : url.startsWith(`${base}/`) || url.startsWith(`${base}?`) || url === base ? url.slice(base.length) : mockPath;
  upstream
    .forward(x, target.startsWith('/') ? target : `/${target}`, x.upstreamBody)
    .then((answer) => {
      if (x.res.destroyed) return;
      // The proxy's own 502/504, as `errors:` reshapes it (upstreamUnreachable, upstreamTimeout).
      if (answer.kind !== undefined && x.compiled.errors !== undefined && writers.respondOwn(x, 'upstream', answer.kind, answer.status, answer.body, limitsOf(x, verdict), answer.note, mockPath)) return;
      const own = [...limitsOf(x, verdict), ...x.extra];
      const ownNames = new Set(own.filter((_, i) => i % 2 === 0).map((n) => n.toLowerCase()));
      const headers: string[] = [];
      for (let i = 0; i < answer.headers.length; i += 2) if (!ownNames.has((answer.headers[i] as string).toLowerCase())) headers.push(answer.headers[i] as string, answer.headers[i + 1] as string);
      if (answer.stream !== undefined) return streamUpstream(x, answer.status, [...headers, ...own], answer.stream, answer.note, writers);
      send(x, 'upstream', answer.status, [...headers, ...own], answer.body, answer.note);
    })
    .catch((err: unknown) => failed(x, err));
}

/** An upstream event stream: the head at once, each chunk as it arrives; journaled (without a body) and logged when it ends. */
async function streamUpstream(x: Exchange, status: number, headers: string[], stream: AsyncIterable<Buffer>, note: string, writers: UpstreamWriters): Promise<void> {
  x.res.writeHead(status, headers);
  x.res.flushHeaders();
  try {
    for await (const chunk of stream) {
      if (x.res.destroyed) break;
      x.res.write(chunk);
    }
    x.res.end();
  } catch {
    x.res.destroy(); // the upstream broke off: so does this answer
    note = `${note}; broken off by the upstream`;
  }
  const ms = x.started === 0 ? 0 : performance.now() - x.started;
  writers.journaled(x, 'upstream', status, headers, '', note, ms);
  if (writers.requestLog.enabled) writers.requestLog.log({ method: x.method, path: x.path, status, durationMs: ms, note });
}
