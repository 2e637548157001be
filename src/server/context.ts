// What every phase of a server's start shares (src/mock-server.ts makes it): the options, the config
// it started with, the logger and the stop stack, and the two things that change while it starts.
import type { Config } from '../config/types.js';
import type { Logger } from '../logger.js';
import type { MockServerOptions } from '../mock-server-types.js';
import type { StopStack } from '../stop-stack.js';

export interface StartContext {
  readonly options: MockServerOptions;
  /** The config loaded at start. */
  readonly config: Config;
  readonly logger: Logger;
  /** Each part pushes its stop here as it starts. */
  readonly stops: StopStack;
  /** Where the server listens: the option over `server.host`. */
  readonly host: string;
  /** Set once the fronts are open: a stop then lets requests finish and prints the summaries. */
  opened: boolean;
  /** The config served now: the first until the runtime holds it. */
  served: () => Config;
  /** `text` with every key the server knows scrubbed (its redactor's, once the runtime holds it). */
  shown: (text: string) => string;
}

export function startContext(
  options: MockServerOptions,
  config: Config,
  logger: Logger,
  stops: StopStack,
): StartContext {
  return {
    options,
    config,
    logger,
    stops,
    host: options.host ?? config.server.host,
    opened: false,
    served: () => config,
    shown: (text) => text,
  };
}

/** The names of a config's `keys:`. */
export const keyNames = (c: Config): string[] => (c.keys ?? []).map((k) => k.name);
