import { loadConfig, formatIssue } from '../../config/load.js';
import { EXIT_FAILURE, EXIT_OK, type CommandIO } from './io.js';

/**
 * `mockapi validate`: checks a config file. Prints every problem on stderr (one line each,
 * `file:line:col: message`) and returns 1, or prints `<file> is valid (3 endpoints)` on stdout
 * and returns 0.
 */
export async function runValidate(opts: { config: string }, io: CommandIO): Promise<number> {
  const result = await loadConfig(opts.config);
  if (!result.ok) {
    for (const issue of result.issues) io.err(formatIssue(issue));
    return EXIT_FAILURE;
  }
  const count = result.config.endpoints.length;
  io.out(`${opts.config} is valid (${count} ${count === 1 ? 'endpoint' : 'endpoints'})`);
  return EXIT_OK;
}
