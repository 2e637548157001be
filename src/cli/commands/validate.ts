import { loadConfig, formatIssue } from '../../config/load.js';
import { EXIT_FAILURE, EXIT_OK, type CommandIO } from './io.js';
import type { Config } from '../../config/types.js';

/** The description's problems with the config, as `file:line:col: message` lines. */
async function describedProblems(file: string, config: Config): Promise<string[]> {
  const { checkAgainstDescription } = await import('../../validate/check-config.js');
  const problems = await checkAgainstDescription(config);
  if (problems.length === 0) return [];
  const { readFile } = await import('node:fs/promises');
  const { readPositioned } = await import('../../config/read-positioned.js');
  const { createIssueList } = await import('../../config/issues.js');
  const read = readPositioned(await readFile(file, 'utf8'), file);
  if (!read.ok) return problems.map((p) => `${file}: ${p.message}`);
  const issues = createIssueList(file, read.locator);
  for (const problem of problems) issues.report(problem.path, problem.message);
  return issues.issues.map(formatIssue);
}

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
  if (result.config.openapi !== undefined) {
    // With a description: every schema compiled, every static body checked against its response.
    const problems = await describedProblems(opts.config, result.config);
    if (problems.length > 0) {
      for (const line of problems) io.err(line);
      return EXIT_FAILURE;
    }
  }
  const count = result.config.endpoints.length;
  io.out(`${opts.config} is valid (${count} ${count === 1 ? 'endpoint' : 'endpoints'})`);
  return EXIT_OK;
}
