import { compileWhen, type AnswerIssue, type Compiled, type IssuePath, type RequestContext } from './index.js';

/** A compiled `when` of an action or a lifecycle move: whether it holds for an object. */
export type ObjectTest = (object: unknown) => boolean;

/**
 * Compiles a `when` over an object's fields (`{ status: { in: [a, b] } }`, `metadata.plan: pro`)
 * with the matchers of an answer's `when`: each field path is read as `body.<path>` of an answer,
 * and every issue comes back at the field's own path under `base`.
 */
export function compileObjectWhen(when: Record<string, unknown>, base: IssuePath): Compiled<ObjectTest> {
  const asBody: Record<string, unknown> = {};
  const fieldOf = new Map<string, string>();
  for (const [field, matcher] of Object.entries(when)) {
    const key = `body.${field}`;
    fieldOf.set(key, field);
    asBody[key] = matcher;
  }
  const compiled = compileWhen(asBody, { path: ['when'] });
  if (!compiled.ok) {
    const issues: AnswerIssue[] = compiled.issues.map((issue) => {
      const [, key, ...rest] = issue.path;
      const field = typeof key === 'string' ? (fieldOf.get(key) ?? key) : key;
      const message = issue.message.replace(/`body\.[^`]*`/g, (m) => `\`${m.slice(6)}`);
      return { ...issue, message, path: field === undefined ? base : [...base, field, ...rest] };
    });
    return { ok: false, issues };
  }
  const { test } = compiled.value;
  return { ok: true, value: (object) => test({ body: object } as unknown as RequestContext) };
}
