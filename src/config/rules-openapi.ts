import { resolve } from 'node:path';
import { compileTemplate } from '../expression/template.js';
import { compileString } from '../expression/string-template.js';
import type { FieldPath } from './field-path.js';
import type { IssueList } from './issues.js';

/**
 * The rules of `openapi:` that need the description itself: it must read (inside its folder, within
 * the size and alias bounds) and every endpoint's `openapi:` must name one of its operations. Async
 * (the description is a file of its own), so checked by load.ts after the other rules pass.
 */

type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => v !== null && typeof v === 'object' && !Array.isArray(v);

/** A problem of the `openapi:` section, at its field. */
export interface OpenApiIssue {
  path: FieldPath;
  message: string;
}

/** Expressions of `openapi.validate.answer` that do not compile (sync; run with the other rules). */
export function checkViolationAnswer(issues: IssueList, data: unknown): void {
  const openapi = isObj(data) ? data.openapi : undefined;
  const validate = isObj(openapi) ? openapi.validate : undefined;
  const answer = isObj(validate) ? validate.answer : undefined;
  if (!isObj(answer)) return;
  const options = { allowViolations: true, env: {} };
  const base = ['openapi', 'validate', 'answer'];
  if (answer.body !== undefined) {
    const compiled = compileTemplate(answer.body, options);
    if (!compiled.ok)
      for (const issue of compiled.issues) issues.report([...base, 'body', ...issue.path], issue.message);
  }
  if (isObj(answer.headers)) {
    for (const [name, value] of Object.entries(answer.headers)) {
      if (typeof value !== 'string' || !value.includes('${')) continue;
      const compiled = compileString(value, options);
      if (!compiled.ok) issues.report([...base, 'headers', name], compiled.issue.message);
    }
  }
}

/**
 * How much of the description the config check reads: `now` reads it whole (every file its `$ref`s
 * name) and checks each endpoint's `openapi:` against its operations, as `mockapi validate` and a
 * reload do; `later` only looks at its file (missing, a folder, too large), as `serve` starts: the
 * rest is read by the first request that needs it (src/validate/late-report.ts).
 */
export type DescriptionCheck = 'now' | 'later';

/** Problems of the description `data.openapi.spec` names (relative to `dir`) and of the endpoints' operations. */
export async function openApiIssues(
  data: unknown,
  dir: string,
  check: DescriptionCheck = 'now',
): Promise<OpenApiIssue[]> {
  const openapi = isObj(data) ? data.openapi : undefined;
  if (!isObj(openapi) || typeof openapi.spec !== 'string') return [];
  if (check === 'later') {
    const { entryProblem } = await import('../description/description.js');
    const problem = await entryProblem(resolve(dir, openapi.spec));
    return problem === undefined ? [] : [{ path: ['openapi', 'spec'], message: problem }];
  }
  const { loadDescription, normalizeMarker } = await import('../description/description.js');
  const read = await loadDescription(resolve(dir, openapi.spec));
  if (!read.ok) return [{ path: ['openapi', 'spec'], message: read.message }];
  const issues: OpenApiIssue[] = [];
  const endpoints = isObj(data) && Array.isArray(data.endpoints) ? data.endpoints : [];
  endpoints.forEach((endpoint: unknown, i) => {
    if (!isObj(endpoint) || typeof endpoint.openapi !== 'string') return;
    // Imported from another description: its operation is that one's, and it is not validated.
    if (
      typeof endpoint.openapiSpec === 'string' &&
      resolve(dir, endpoint.openapiSpec.trim()) !== resolve(dir, openapi.spec as string)
    )
      return;
    const key = normalizeMarker(endpoint.openapi);
    if (!read.description.operations.has(key))
      issues.push({
        path: ['endpoints', i, 'openapi'],
        message: `the description ${openapi.spec} has no operation ${key}`,
      });
  });
  return issues;
}
