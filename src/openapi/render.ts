import { Document } from 'yaml';
import type { Answer } from './answers.js';
import type { ImportedEndpoint } from './operations.js';

/** The config field that marks an endpoint as imported; its value is the operation's key. */
export const MARKER = 'openapi';
/** The fields an import writes; every other field of an imported endpoint is the user's and is kept. */
export const OWNED_FIELDS = [MARKER, 'openapiSpec', 'method', 'path', 'response', 'responses'];
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
 * An imported endpoint as a config value. One answer: `response`. Several named examples:
 * `responses` (a list of dynamic answers) where each example but the first is picked by `Prefer: example=<name>`,
 * and the first, last and without `when`, answers everything else.
 */
export function endpointValue(endpoint: ImportedEndpoint, source: string, userFields: [string, unknown][] = []): Record<string, unknown> {
  const value: Record<string, unknown> = { [MARKER]: endpoint.key, [SOURCE]: source, method: endpoint.method, path: endpoint.path };
  const [first, ...others] = endpoint.answers;
  if (others.length === 0) value.response = leaf(first ?? { status: 200 });
  else {
    value.responses = [
      ...others.map((answer) => ({ name: answer.name, when: preferWhen(answer.name ?? ''), ...leaf({ ...answer, name: undefined }) })),
      leaf(first as Answer),
    ];
  }
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
