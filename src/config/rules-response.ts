import { accessSync, constants, statSync } from 'node:fs';
import { resolve } from 'node:path';
import type { FieldPath } from './field-path.js';
import { describeValue } from './issues.js';
import { checkFaults } from './rules-resilience.js';
import { bodyProblem, has, isObject, type RuleContext } from './rule-kit.js';

export function checkBodyFile(ctx: RuleContext, path: FieldPath, file: string): void {
  const absolute = resolve(ctx.dir, file);
  let problem: string | undefined;
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
