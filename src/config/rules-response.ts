import { accessSync, constants, realpathSync, statSync } from 'node:fs';
import { isAbsolute, relative, resolve, sep } from 'node:path';
import type { FieldPath } from './field-path.js';
import { describeValue } from './issues.js';
import { checkFaults } from './rules-resilience.js';
import { bodyProblem, has, isObject, type RuleContext } from './rule-kit.js';

/** Whether `path` is `dir` or lies under it (both absolute). */
function isWithin(dir: string, path: string): boolean {
  const rel = relative(dir, path);
  return !(rel === '..' || rel.startsWith(`..${sep}`) || isAbsolute(rel));
}

function realOrSelf(path: string): string {
  try {
    return realpathSync(path);
  } catch {
    return path;
  }
}

/**
 * Why a body file that must lie inside `dir` does not: written outside it (absolute, or `..`
 * climbing out; decided before the file system is asked, so nothing outside is even looked at),
 * or reached through a symbolic link that leads out. Undefined when it is inside.
 */
function outsideProblem(dir: string, absolute: string, also: readonly string[]): string | undefined {
  const rule = "a stub's bodyFile must be a file inside it";
  if (!isWithin(dir, absolute)) return `is outside the config's folder (${dir}); ${rule}`;
  let real: string;
  try {
    real = realpathSync(absolute);
  } catch {
    return undefined; // missing or unreadable: the checks that follow say which
  }
  if (![dir, ...also].some((folder) => isWithin(realOrSelf(folder), real)))
    return `leads out of the config's folder (${dir}) through a symbolic link; ${rule}`;
  return undefined;
}

export function checkBodyFile(ctx: RuleContext, path: FieldPath, file: string): void {
  const absolute = resolve(ctx.dir, file);
  let problem =
    ctx.bodyFilesInside === undefined
      ? undefined
      : outsideProblem(resolve(ctx.dir), absolute, ctx.bodyFilesInside.also);
  if (problem === undefined) {
    try {
      const stat = statSync(absolute, { throwIfNoEntry: false });
      if (stat === undefined) problem = `does not exist (looked for ${absolute})`;
      else if (stat.isDirectory()) problem = `is a folder, not a file (${absolute})`;
      else if (!stat.isFile()) problem = `is not a regular file (${absolute})`;
      else accessSync(absolute, constants.R_OK);
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code;
      problem =
        code === 'EACCES' || code === 'EPERM'
          ? `cannot be read: permission denied (${absolute})`
          : `cannot be read (${absolute}): ${(err as Error).message}`;
    }
  }
  if (problem !== undefined) ctx.issues.report(path, `${describeValue(file)} ${problem}`);
}

/** The checks of one leaf answer (a `response:` or an item of `responses`/`sequence`/`pick`): headers, body file, JSON body. */
export function checkResponse(ctx: RuleContext, base: FieldPath, response: unknown): void {
  if (!isObject(response)) return;
  if (isObject(response.headers)) {
    const seen = new Map<string, string>();
    for (const name of Object.keys(response.headers)) {
      const lower = name.toLowerCase();
      const first = seen.get(lower);
      const path = [...base, 'headers', name];
      if (first !== undefined && !ctx.issues.has(path)) {
        ctx.issues.report(
          path,
          `repeats the header \`${first}\` (header names are case-insensitive); keep one`,
          ctx.issues.locator.keyAt(path),
        );
      }
      if (first === undefined) seen.set(lower, name);
    }
  }
  checkFaults(ctx, [...base, 'faults'], response.faults);
  const bodyFilePath = [...base, 'bodyFile'];
  if (typeof response.bodyFile === 'string' && !ctx.issues.has(bodyFilePath))
    checkBodyFile(ctx, bodyFilePath, response.bodyFile);
  if (has(response, 'body')) {
    const problem = bodyProblem(response.body, [...base, 'body']);
    if (problem !== undefined) ctx.issues.report(problem.path, problem.message);
  }
}
