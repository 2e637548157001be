import type { Exchange } from '../http/exchange.js';
import type { Reply } from '../http/reply.js';
import type { Step } from '../http/steps.js';
import type { UpstreamAnswer, UpstreamStep } from './step.js';

export interface UpstreamStepParts {
  reply: Reply;
  /** None: no step. */
  upstream?: UpstreamStep;
}

/**
 * The "upstream" step, after match: a request no endpoint answers (or every request, while
 * recording with `--mode all`) goes to the real API. Its answer (or a 502/504) is sent with the
 * mock's limit and CORS headers, which replace the upstream's headers of the same names.
 */
export function upstreamStep(p: UpstreamStepParts): Step | undefined {
  const { reply, upstream } = p;
  if (upstream === undefined) return undefined;

  function answered(x: Exchange, answer: UpstreamAnswer): Promise<void> | void {
    if (x.res.destroyed) return;
    // The proxy's own 502/504, as `errors:` reshapes it (upstreamUnreachable, upstreamTimeout).
    if (
      answer.kind !== undefined &&
      x.compiled.errors !== undefined &&
      reply.own(x, 'upstream', answer.kind, answer.status, answer.body, answer.note)
    )
      return;
    const own = [...reply.limits(x), ...x.extra];
    const ownNames = new Set(own.filter((_, i) => i % 2 === 0).map((n) => n.toLowerCase()));
    const headers: string[] = [];
    for (let i = 0; i < answer.headers.length; i += 2)
      if (!ownNames.has((answer.headers[i] as string).toLowerCase()))
        headers.push(answer.headers[i] as string, answer.headers[i + 1] as string);
    // An event stream: the head at once, each chunk as it arrives; journaled (without a body) and logged when it ends.
    if (answer.stream !== undefined)
      return reply.pipe(x, 'upstream', answer.status, [...headers, ...own], answer.stream, answer.note);
    reply.send(x, 'upstream', answer.status, [...headers, ...own], answer.body, answer.note);
  }

  return {
    name: 'upstream',
    run(x, next) {
      if (!upstream.takes(x, x.endpoint !== undefined)) return next(x);
      // The target as the client sent it (still percent-encoded), after `server.basePath` (`/mock`).
      const url = x.req.url ?? '';
      const base = x.compiled.basePath;
      const target =
        base === ''
          ? url
          : url.startsWith(`${base}/`) || url.startsWith(`${base}?`) || url === base
            ? url.slice(base.length)
            : x.mockPath;
      upstream
        .forward(x, target.startsWith('/') ? target : `/${target}`, x.wholeBody)
        .then((answer) => answered(x, answer))
        .catch((err: unknown) => reply.failed(x, err));
    },
    wantsWholeBody: (x, target) => (upstream.takes(x, target !== undefined) ? 'whole' : 'journal'),
  };
}
