/**
 * `upstream.auth.value`: a template whose only secrets are `${env.MOCKAPI_*}` references, so the
 * committed config never holds a credential. A scheme word (`Bearer `, `Basic `, `Token `) may
 * stand before the references; any other literal text is refused.
 */

const REFERENCE = /\$\{\s*env\.([A-Za-z0-9_]+)\s*\}/g;
const ALLOWED_LITERAL = /^([A-Za-z][A-Za-z0-9-]{0,20} )?$/;

/** Why `value` is not an allowed auth value, or undefined when it is. */
export function authValueProblem(value: string): string | undefined {
  const names = [...value.matchAll(REFERENCE)].map((m) => m[1] as string);
  if (names.length === 0)
    return 'must take the credential from the environment, as "Bearer ${env.MOCKAPI_UPSTREAM_KEY}"; a literal credential would be committed with the config';
  const wrong = names.find((n) => !n.startsWith('MOCKAPI_'));
  if (wrong !== undefined) return `may only read environment variables named MOCKAPI_*, got ${wrong}`;
  const literal = value.replace(REFERENCE, '');
  if (!ALLOWED_LITERAL.test(literal))
    return 'may hold only ${env.MOCKAPI_*} references, after an optional scheme word such as "Bearer "; a literal credential would be committed with the config';
  return undefined;
}

/** The environment variables an auth value reads. */
export function authValueNames(value: string): string[] {
  return [...value.matchAll(REFERENCE)].map((m) => m[1] as string);
}

/** The value with its references filled from `env`: the secret parts, and the names not set. */
export function resolveAuthValue(
  value: string,
  env: Readonly<Record<string, string | undefined>>,
): { value: string; secrets: string[]; missing: string[] } {
  const secrets: string[] = [];
  const missing: string[] = [];
  const filled = value.replace(REFERENCE, (_, name: string) => {
    const v = env[name];
    if (v === undefined || v === '') missing.push(name);
    else secrets.push(v);
    return v ?? '';
  });
  return { value: filled, secrets, missing };
}
