// The second phase of a server's start: the config runtime (what is served, and reload), the request
// log, and the answer state that reloads keep (sequence positions, counters, scenario states).
import { createAnswerState, type AnswerState } from '../answer/answer-state.js';
import { compileConfig } from '../answer/compile.js';
import { createConfigRuntime, type ConfigRuntime } from '../answer/config-runtime.js';
import { ANSWER_PARTS } from '../answer-parts.js';
import type { Config } from '../config/types.js';
import { createRequestLogger, type RequestLogger } from '../http/request-log.js';
import { storeNeed } from '../workers/needs-store.js';
import type { StartContext } from './context.js';
import type { Foundation } from './foundation.js';

export interface ServedParts {
  runtime: ConfigRuntime;
  requestLog: RequestLogger;
  answers: AnswerState;
}

export async function startRuntime(ctx: StartContext, p: Foundation): Promise<ServedParts> {
  const { options, config, logger, stops } = ctx;
  const { hub, fleet, storeUrl } = p;
  const runtime = createConfigRuntime({
    initial: await compileConfig(config, undefined, { description: 'later', parts: ANSWER_PARTS }),
    parts: ANSWER_PARTS,
    seed: options.seed,
    logger,
    // A `serve --workers` worker without a store: a reload that adds limits is refused as start-up refuses them.
    ...(hub === undefined || storeUrl !== undefined ? {} : { refuse: reloadNeedsStore }),
  });
  ctx.served = () => runtime.holder.current.config;
  ctx.shown = (text) => runtime.holder.current.redactor?.scrub(text) ?? text;
  const requestLog = createRequestLogger({
    format: options.log ?? 'off',
    stream: options.logStream ?? process.stdout,
    color: options.color ?? false,
    // A stop takes 2 s at most besides endpoint delays; a stuck output costs log lines, not more time.
    closeTimeoutMs: 500,
    redactor: () => runtime.holder.current.redactor,
  });
  stops.push(() => requestLog.close());
  // Sequence positions, request counters and scenario states: outside the compiled config, so reloads keep them.
  const answers = fleet === undefined ? createAnswerState(config) : fleet.scenarios(createAnswerState(config));
  runtime.onSwap((_prev, next) => answers.adopt(next));
  return { runtime, requestLog, answers };
}

/** Why a `serve --workers` worker without a store does not serve `config` (see workers/needs-store.ts). */
function reloadNeedsStore(config: Config): string | undefined {
  const need = storeNeed(config);
  return need === undefined ? undefined : `${need.why} ${need.remedy}`;
}
