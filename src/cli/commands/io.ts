/**
 * How a command talks to the user. The CLI passes the real streams; tests pass collectors.
 * `out` is for results (a key, JSON), `err` for messages. Each call is one line, without `\n`.
 */
export interface CommandIO {
  out(line: string): void;
  err(line: string): void;
}

/** Exit codes: 0 success, 1 invalid config or a failed command, 2 wrong usage, 130 a second signal. */
export const EXIT_OK = 0;
export const EXIT_FAILURE = 1;
export const EXIT_USAGE = 2;
/** The config every command reads unless `-c, --config` names another. */
export const DEFAULT_CONFIG = './mockapi.yaml';

/** Exit code of a second SIGINT/SIGTERM during a graceful stop (128 + SIGINT, as shells report Ctrl-C). */
export const EXIT_INTERRUPTED = 130;

const guarded = new WeakSet<NodeJS.WritableStream>();

/**
 * Makes output to `stream` droppable: once its reader has gone (`mockapi serve | head -1` gets EPIPE
 * after the first line) the stream's error is taken here instead of crashing the process, and
 * every later write is skipped. Safe to call more than once per stream.
 */
export function dropOutputOnError(stream: NodeJS.WritableStream): void {
  if (guarded.has(stream)) return;
  guarded.add(stream);
  stream.on('error', () => {});
}

/** Writes one line to a stream guarded by {@link dropOutputOnError}; never throws. */
export function writeLine(stream: NodeJS.WriteStream, line: string): void {
  if (stream.destroyed || !stream.writable) return;
  try {
    stream.write(`${line}\n`);
  } catch {
    // A stream that fails synchronously is as gone as one that reports EPIPE: drop the line.
  }
}

/** The process's own stdout and stderr as a {@link CommandIO}; a closed one drops its lines. */
export function createProcessIO(): CommandIO {
  dropOutputOnError(process.stdout);
  dropOutputOnError(process.stderr);
  return {
    out: (line) => writeLine(process.stdout, line),
    err: (line) => writeLine(process.stderr, line),
  };
}
