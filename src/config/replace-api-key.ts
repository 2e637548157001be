import { CST, Parser, parseDocument } from 'yaml';

export type ReplaceApiKeyResult = { ok: true; text: string } | { ok: false; reason: string };

export type ScalarStyle = 'scalar' | 'single-quoted-scalar' | 'double-quoted-scalar';
type CollectionItem = CST.CollectionItem;

/**
 * Replaces the value of the top-level `apiKey` in a YAML source and nothing else.
 *
 * The yaml package's CST parser gives us the exact offset and source of the value token; we splice
 * the new scalar into the original string at that offset, so every other character — comments,
 * order, spacing, blank lines, CRLF line endings, a BOM, trailing content — stays byte-identical.
 * (Re-stringifying the CST with `CST.setScalarValue` would also work, but splicing makes the
 * "nothing else changes" guarantee obvious rather than a property of the stringifier.)
 *
 * The original quoting style is kept when the new key reads back as the same string in it;
 * otherwise the value is written double-quoted. The result is re-parsed to check that `apiKey`
 * now reads as `newKey`.
 *
 * Refuses (a value, not an exception) when `apiKey` is absent, duplicated, not a plain or quoted
 * scalar (block scalar, alias, collection), carries an anchor or tag, or when the file holds more
 * than one YAML document.
 */
export function replaceApiKey(source: string, newKey: string): ReplaceApiKeyResult {
  const found = findApiKeyValue(source);
  if (!found.ok) return found;
  const { value } = found;
  const errors = parseDocument(source).errors;
  if (errors.length > 0) return refuse(`the file is not valid YAML: ${errors[0]?.message.split('\n')[0]}`);
  const styles: ScalarStyle[] = [value.type, 'double-quoted-scalar'];
  for (const style of styles) {
    const text =
      source.slice(0, value.offset) + quoteAs(style, newKey) + source.slice(value.offset + value.source.length);
    if (readsBackAs(text, newKey)) return { ok: true, text };
  }
  return { ok: false, reason: 'the new key cannot be written as a YAML string in this file' };
}

type FoundValue = { ok: true; value: CST.FlowScalar & { type: ScalarStyle } } | { ok: false; reason: string };

function findApiKeyValue(source: string): FoundValue {
  const tokens = [...new Parser().parse(source)];
  const docs = tokens.filter((t): t is CST.Document => t.type === 'document');
  if (tokens.some((t) => t.type === 'error')) return refuse('the file is not valid YAML');
  if (docs.length > 1) return refuse(`the file holds ${docs.length} YAML documents; mockapi expects exactly one`);
  const root = docs[0]?.value;
  if (!root || !isMapping(root)) return refuse('the top level of the file is not a mapping');

  const matches = root.items.filter((item) => isApiKeyKey(item.key));
  if (matches.length === 0) return refuse('there is no top-level apiKey to replace');
  if (matches.length > 1) return refuse(`apiKey appears ${matches.length} times at the top level`);
  const item = matches[0] as CollectionItem;

  if (item.sep?.some((t) => t.type === 'anchor' || t.type === 'tag')) {
    return refuse('the apiKey value carries an anchor or a tag; edit it by hand');
  }
  const value = item.value;
  if (!value) return refuse('apiKey has no value');
  switch (value.type) {
    case 'scalar':
    case 'single-quoted-scalar':
    case 'double-quoted-scalar':
      return { ok: true, value: value as CST.FlowScalar & { type: ScalarStyle } };
    case 'alias':
      return refuse('apiKey is an alias (*name); edit it by hand');
    case 'block-scalar':
      return refuse('apiKey is a block scalar (| or >); write it on one line');
    default:
      return refuse('apiKey is not a single string value');
  }
}

function refuse(reason: string): { ok: false; reason: string } {
  return { ok: false, reason };
}

export function isMapping(token: CST.Token): token is CST.BlockMap | CST.FlowCollection {
  return token.type === 'block-map' || (token.type === 'flow-collection' && token.start.source === '{');
}

function isApiKeyKey(key: CST.Token | null | undefined): boolean {
  if (!key) return false;
  const resolved = CST.resolveAsScalar(key, false, () => {});
  return resolved?.value === 'apiKey';
}

export function quoteAs(style: ScalarStyle, key: string): string {
  switch (style) {
    case 'scalar':
      return key;
    case 'single-quoted-scalar':
      return `'${key.replaceAll("'", "''")}'`;
    case 'double-quoted-scalar':
      // JSON string escapes are a subset of YAML double-quoted escapes.
      return JSON.stringify(key);
  }
}

/** True when `text` is one clean YAML document whose top-level apiKey is the string `key`. */
function readsBackAs(text: string, key: string): boolean {
  const doc = parseDocument(text);
  return doc.errors.length === 0 && doc.get('apiKey') === key;
}
