import { ControlError } from '../control/control-error.js';
import type { StubIssue } from './validate.js';

/**
 * A stub that does not pass the config's rules: `issues` lists every problem, each with where it
 * is in the call's body (`/endpoint/response/status`). A 400 `invalid_stub` of the admin API.
 */
export class StubInvalidError extends ControlError {
  constructor(readonly issues: StubIssue[]) {
    super(
      400,
      'invalid_stub',
      `the stub is not valid:\n${issues.map((issue) => `  ${issue.path}: ${issue.message}`).join('\n')}`,
    );
    this.name = 'StubInvalidError';
  }
}

/** The 413's words for a stub over `limit` bytes (`server.maxBodySize`), over HTTP and in process. */
export function stubTooLarge(limit: number): string {
  return `a stub is at most ${limit} bytes (server.maxBodySize)`;
}
