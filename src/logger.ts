/** Where library code sends messages; the CLI decides how they are shown. Never given an API key. */
export interface Logger {
  info(message: string): void;
  warn(message: string): void;
  error(message: string): void;
  /**
   * Where the lines go that every worker of `serve --workers` writes alike, each from its own copy
   * of the same file — a reload, a config not reloaded and why, a changed setting that needs a
   * restart —, so that one worker writes them (src/workers/lead-lines.ts). Absent: this logger.
   */
  readonly alike?: Logger;
}

export const silentLogger: Logger = { info() {}, warn() {}, error() {} };

/** The logger of the lines every worker writes alike (see {@link Logger.alike}). */
export function alikeLines(logger: Logger): Logger {
  return logger.alike ?? logger;
}
