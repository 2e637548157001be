import { Document } from 'yaml';
import type { Answer, CodeAnswers } from './answers.js';
import type { ImportedEndpoint } from './operations.js';

/** The config field that marks an endpoint as imported; its value is the operation's key. */
export const MARKER = 'openapi';
/** The fields an import writes; every other field of an imported endpoint is the user's and is kept. */
export const OWNED_FIELDS = [MARKER, 'openapiSpec', 'method', 'path', 'response', 'responses'];
/** The name of an imported endpoint's default answer when other responses are picked by `Prefer: code=`. */
export const DEFAULT_ANSWER = 'default';
/** The config field naming the description an imported endpoint came from (relative to the config's folder). */
export const SOURCE = 'openapiSpec';

function leaf(answer: Answer): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  if (answer.name !== undefined) out.name = answer.name;
  out.status = answer.status;
  if (answer.headers !== undefined) out.headers = answer.headers;
  if (answer.body !== undefined) out.body = answer.body;
  return out;
}

const escapeRegex = (text: string): string => text.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&');

/**
 * The `when` that picks a named example: the request's `Prefer` header names it, as RFC 7240
 * preferences are written (`Prefer: example=cat`, also `example="cat"` and beside other
 * preferences). The name must end where the preference ends, so `example=cat` never picks `category`.
 */
export function preferWhen(name: string): Record<string, unknown> {
  const n = escapeRegex(name);
  return { 'headers.prefer': { matches: `(^|[,;])\\s*example=("${n}"|${n})\\s*($|[,;])` } };
}

/**
 * The `when` that picks another response of the operation: the request's `Prefer` header asks for
 * its status (`Prefer: code=404`, also `code="404"` and beside other preferences); the whole
 * status must match, so `code=40` never picks 404.
 */
export function preferCodeWhen(status: number): Record<string, unknown> {
  return { 'headers.prefer': { matches: `(^|[,;])\\s*code=("${status}"|${status})\\s*($|[,;])` } };
}

/** A named example's answers in `responses` order: each but the first picked by `Prefer: example=<name>`, then the first. */
function exampleItems(answers: Answer[], label: (answer: Answer) => string | undefined): Record<string, unknown>[] {
  const [first, ...others] = answers;
  return [
    ...others.map((answer) => ({
      name: label(answer),
      when: preferWhen(answer.name ?? ''),
      ...leaf({ ...answer, name: undefined }),
    })),
    leaf({ ...(first as Answer), name: label(first as Answer) }),
  ];
}

/**
 * The item of `responses` that answers `Prefer: code=<status>`: the response's one answer, or its
 * named examples as a list of their own (`Prefer: code=404, example=gone`; the first is the
 * default). Named `code=404` (and `code=404, example=gone`), the preference that picks it, unless
 * an example of the default response already has that name.
 */
function codeItem(code: CodeAnswers, taken: ReadonlySet<string>): Record<string, unknown> {
  const label = (answer: Answer): string | undefined => {
    const name = answer.name === undefined ? `code=${code.status}` : `code=${code.status}, example=${answer.name}`;
    return taken.has(name) ? undefined : name;
  };
  const when = preferCodeWhen(code.status);
  if (code.answers.length <= 1)
    return {
      name: label({ status: code.status }),
      when,
      ...leaf({ ...(code.answers[0] ?? { status: code.status }), name: undefined }),
    };
  return { when, responses: exampleItems(code.answers, label) };
}

/** Drops the `name: undefined` entries that would render as `name: null`. */
function withoutUndefined(item: Record<string, unknown>): Record<string, unknown> {
  return Object.fromEntries(Object.entries(item).filter(([, value]) => value !== undefined));
}

/**
 * An imported endpoint as a config value. One answer: `response`. Otherwise `responses` (a list of
 * dynamic answers): first the operation's other responses, each picked by `Prefer: code=<status>`;
 * then each named example but the first, picked by `Prefer: example=<name>`; last, without `when`,
 * the first example (named `default` when the response has one answer), which answers everything
 * else (an unknown code or name included).
 */
export function endpointValue(
  endpoint: ImportedEndpoint,
  source: string,
  userFields: [string, unknown][] = [],
): Record<string, unknown> {
  const value: Record<string, unknown> = {
    [MARKER]: endpoint.key,
    [SOURCE]: source,
    method: endpoint.method,
    path: endpoint.path,
  };
  const [first, ...others] = endpoint.answers;
  const codes = endpoint.codes ?? [];
  if (others.length === 0 && codes.length === 0) value.response = leaf(first ?? { status: 200 });
  else {
    const taken = new Set(endpoint.answers.flatMap((answer) => (answer.name === undefined ? [] : [answer.name])));
    // The answer sent when no preference picks another is named, so the journal shows an unknown code got it.
    const defaults = others.length === 0 ? [{ ...(first ?? { status: 200 }), name: DEFAULT_ANSWER }] : endpoint.answers;
    const items = [...codes.map((code) => codeItem(code, taken)), ...exampleItems(defaults, (answer) => answer.name)];
    value.responses = items.map(function clean(item): Record<string, unknown> {
      const out = withoutUndefined(item);
      if (Array.isArray(out.responses)) out.responses = (out.responses as Record<string, unknown>[]).map(clean);
      return out;
    });
  }
  // The example `mockapi verify` sends; one the user wrote (or `verify: false`) stays, as a user field.
  if (endpoint.verify !== undefined) value.verify = endpoint.verify;
  for (const [key, field] of userFields) value[key] = field;
  return value;
}

/**
 * The YAML text of one endpoint as a block sequence item, indented by `indent` spaces, with the
 * summary as a comment line above it; every line ends with `eol`.
 */
export function renderEndpoint(summary: string, value: Record<string, unknown>, indent: number, eol: string): string {
  const doc = new Document([value]);
  const text = doc.toString({ lineWidth: 0, minContentWidth: 0, indentSeq: true, flowCollectionPadding: true });
  const pad = ' '.repeat(indent);
  const lines = text.replace(/\n$/, '').split('\n');
  const comment = `${pad}# ${summary.replace(/[\r\n]+/g, ' ')}`;
  return [comment, ...lines.map((line) => (line === '' ? line : pad + line))].map((line) => line + eol).join('');
}
