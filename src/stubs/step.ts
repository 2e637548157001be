import type { CompiledEndpoint } from '../answer/compile.js';
import type { Exchange } from '../http/exchange.js';
import type { Reply } from '../http/reply.js';
import type { Step } from '../http/steps.js';

/** What the "stub match" step asks of the run-time stubs (the store of src/stubs/store.ts). */
export interface StubMatcher {
  /** Uses up one of the stub's `times` (with `serve --workers`, a stub with `times` answers after a round trip to the primary). */
  take(method: string, path: string): CompiledEndpoint | undefined | Promise<CompiledEndpoint | undefined>;
  /** The same stub, nothing used up. */
  peek(method: string, path: string): CompiledEndpoint | undefined;
  /** Whether some stub has a rate limit of its own. */
  readonly limited: boolean;
}

export interface StubMatchStepParts {
  reply: Reply;
  /** The default session's stubs. None: no step. */
  stubs?: StubMatcher;
  /** A named session's stubs (by its id), undefined while it has none. */
  sessionStubs?: (id: string) => StubMatcher | undefined;
}

/**
 * The "stub match" step, after the limits: the newest run-time stub of the request's session, in
 * `x.endpoint`, answers before the config's endpoints (the match step keeps it).
 */
export function stubMatchStep(p: StubMatchStepParts): Step | undefined {
  const { reply, stubs, sessionStubs } = p;
  if (stubs === undefined) return undefined;
  const stubsOf = (x: Exchange): StubMatcher | undefined => (x.scope.id === '' ? stubs : sessionStubs?.(x.scope.id));
  return {
    name: 'stub match',
    run(x, next) {
      const matcher = stubsOf(x);
      if (matcher === undefined) return next(x);
      const stubbed = matcher.take(x.method, x.mockPath);
      if (stubbed instanceof Promise) {
        return void stubbed
          .then((found) => {
            x.endpoint = found;
            next(x);
          })
          .catch((err: unknown) => reply.failed(x, err));
      }
      x.endpoint = stubbed;
      next(x);
    },
    target: (x) => stubsOf(x)?.peek(x.method, x.mockPath),
    limited: (x) => stubsOf(x)?.limited === true,
  };
}
