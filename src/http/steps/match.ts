import type { CompiledConfig, CompiledEndpoint } from '../../answer/compile.js';
import { closestEndpoint } from '../../pipeline/suggest.js';
import type { Reply } from '../reply.js';
import type { Step } from '../steps.js';

/** The config's endpoint for `method` and `mockPath`, if any. */
export function configEndpoint(
  compiled: CompiledConfig,
  method: string,
  mockPath: string,
): CompiledEndpoint | undefined {
  const index = compiled.router.match(method, mockPath);
  return index === undefined ? undefined : compiled.endpoints[index];
}

/** The match step: the config's endpoint for the request, in `x.endpoint`, unless an earlier step (a stub) set one. */
export function matchStep(): Step {
  return {
    name: 'match',
    run(x, next) {
      x.endpoint ??= configEndpoint(x.compiled, x.method, x.mockPath);
      next(x);
    },
    target: (x) => configEndpoint(x.compiled, x.method, x.mockPath),
  };
}

export interface NotFoundStepParts {
  reply: Reply;
}

/** The "not found" step: no endpoint answers the request — the 404, with the closest endpoint as a "did you mean" note (journal step `match`). */
export function notFoundStep(p: NotFoundStepParts): Step {
  const { reply } = p;
  return {
    name: 'not found',
    run(x, next) {
      if (x.endpoint !== undefined) return next(x);
      const near = closestEndpoint(x.method, x.mockPath, x.compiled.endpoints);
      reply.refuse(x, 'notFound', near === undefined ? undefined : `did you mean ${near.method} ${near.path}?`);
    },
  };
}
