import { loadConfig, formatIssue } from '../../config/load.js';
import { EXIT_FAILURE, EXIT_OK, type CommandIO } from './io.js';
import type { Config } from '../../config/types.js';
import type { DescriptionProblem } from '../../validate/check-config.js';

const plural = (n: number, noun: string): string => `${n} ${noun}${n === 1 ? '' : 's'}`;

/** The description's problems with the config, as `file:line:col: message` lines: errors, then warnings (`file:line:col: warning: message`). */
async function describedProblems(
  file: string,
  config: Config,
): Promise<{ errors: string[]; warnings: string[]; counts: Record<'schema' | 'example', number> }> {
  const { checkAgainstDescription } = await import('../../validate/check-config.js');
  const problems = await checkAgainstDescription(config);
  const counts = { schema: 0, example: 0 };
  for (const p of problems) if (p.warning !== undefined) counts[p.warning]++;
  if (problems.length === 0) return { errors: [], warnings: [], counts };
  const { readFile } = await import('node:fs/promises');
  const { readPositioned } = await import('../../config/read-positioned.js');
  const { createIssueList } = await import('../../config/issues.js');
  const read = readPositioned(await readFile(file, 'utf8'), file);
  const lines = (list: DescriptionProblem[], prefix: string): string[] => {
    if (!read.ok) return list.map((p) => `${file}: ${prefix}${p.message}`);
    const issues = createIssueList(file, read.locator);
    for (const problem of list) issues.report(problem.path, problem.message);
    const ordered = [...issues.issues].sort((a, b) => a.line - b.line || a.column - b.column);
    return ordered.map((issue) => formatIssue({ ...issue, message: `${prefix}${issue.message}` }));
  };
  return {
    errors: lines(
      problems.filter((p) => p.warning === undefined),
      '',
    ),
    warnings: lines(
      problems.filter((p) => p.warning !== undefined),
      'warning: ',
    ),
    counts,
  };
}

/** The line that sums up the warnings, by kind; undefined when there are none. */
function warningSummary(counts: Record<'schema' | 'example', number>): string | undefined {
  const total = counts.schema + counts.example;
  if (total === 0) return undefined;
  const parts: string[] = [];
  if (counts.example > 0)
    parts.push(
      `${plural(counts.example, 'answer')} ${counts.example === 1 ? 'is' : 'are'} the description's own example${counts.example === 1 ? '' : 's'}, which break${counts.example === 1 ? 's' : ''} its own schema (served as written)`,
    );
  if (counts.schema > 0)
    parts.push(`${plural(counts.schema, 'schema')} of the description cannot be compiled (not checked; the rest is)`);
  return `${plural(total, 'warning')} from the description: ${parts.join('; ')}`;
}

/**
 * `mockapi validate`: checks a config file. Prints every problem on stderr (one line each,
 * `file:line:col: message`) and returns 1, or prints `<file> is valid (3 endpoints)` on stdout
 * and returns 0. What the OpenAPI description itself gets wrong is a warning (`warning:` lines on
 * stderr and a summary line on stdout) and does not fail the check.
 */
export async function runValidate(opts: { config: string }, io: CommandIO): Promise<number> {
  const result = await loadConfig(opts.config);
  if (!result.ok) {
    for (const issue of result.issues) io.err(formatIssue(issue));
    return EXIT_FAILURE;
  }
  let summary: string | undefined;
  if (result.config.openapi !== undefined) {
    // With a description: every schema compiled, every static body checked against its response.
    const { errors, warnings, counts } = await describedProblems(opts.config, result.config);
    for (const line of [...errors, ...warnings]) io.err(line);
    if (errors.length > 0) return EXIT_FAILURE;
    summary = warningSummary(counts);
  }
  const count = result.config.endpoints.length;
  io.out(`${opts.config} is valid (${count} ${count === 1 ? 'endpoint' : 'endpoints'})`);
  if (summary !== undefined) io.out(summary);
  return EXIT_OK;
}
