/**
 * How a command talks to the user. The CLI passes the real streams; tests pass collectors.
 * `out` is for results (a key, JSON), `err` for messages. Each call is one line, without `\n`.
 */
export interface CommandIO {
  out(line: string): void;
  err(line: string): void;
}

/** Exit codes of SPEC §1. */
export const EXIT_OK = 0;
export const EXIT_FAILURE = 1;
export const EXIT_USAGE = 2;
