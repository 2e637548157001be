import { CST, Parser, parseDocument } from 'yaml';
import { isMapping, quoteAs, type ReplaceApiKeyResult, type ScalarStyle } from './replace-api-key.js';

type Scalar = CST.FlowScalar & { type: ScalarStyle };

/**
 * Replaces the `key` of the item named `name` in the top-level `keys:` list of a YAML source, and
 * nothing else: as `replaceApiKey`, the new scalar is spliced in at the value's offset, so comments,
 * order and formatting stay byte-identical, the quoting style is kept when it can hold the key, and
 * the result is read back. Refuses (a value) when there is no such item, several, or its `key` is
 * not a plain or quoted scalar without anchor or tag.
 */
export function replaceNamedKey(source: string, name: string, newKey: string): ReplaceApiKeyResult {
  const found = findKeyValue(source, name);
  if (!found.ok) return found;
  const { value } = found;
  const errors = parseDocument(source).errors;
  if (errors.length > 0) return refuse(`the file is not valid YAML: ${errors[0]?.message.split('\n')[0]}`);
  for (const style of [value.type, 'double-quoted-scalar'] as ScalarStyle[]) {
    const text =
      source.slice(0, value.offset) + quoteAs(style, newKey) + source.slice(value.offset + value.source.length);
    if (readsBackAs(text, name, newKey)) return { ok: true, text };
  }
  return refuse('the new key cannot be written as a YAML string in this file');
}

function refuse(reason: string): { ok: false; reason: string } {
  return { ok: false, reason };
}

const scalarText = (token: CST.Token | null | undefined): string | undefined =>
  token ? CST.resolveAsScalar(token, false, () => {})?.value : undefined;

function findKeyValue(source: string, name: string): { ok: true; value: Scalar } | { ok: false; reason: string } {
  const tokens = [...new Parser().parse(source)];
  const docs = tokens.filter((t): t is CST.Document => t.type === 'document');
  if (tokens.some((t) => t.type === 'error')) return refuse('the file is not valid YAML');
  if (docs.length !== 1) return refuse(`the file holds ${docs.length} YAML documents; mockapi expects exactly one`);
  const root = docs[0]?.value;
  if (!root || !isMapping(root)) return refuse('the top level of the file is not a mapping');
  const lists = root.items.filter((item) => scalarText(item.key) === 'keys');
  if (lists.length !== 1)
    return refuse(
      lists.length === 0 ? 'there is no top-level keys: list' : 'keys appears more than once at the top level',
    );
  const list = lists[0]?.value;
  if (!list || !(list.type === 'block-seq' || (list.type === 'flow-collection' && list.start.source === '[')))
    return refuse('keys is not a list');
  const entries = list.items
    .map((item) => item.value)
    .filter((v): v is CST.BlockMap | CST.FlowCollection => v !== undefined && v !== null && isMapping(v));
  const named = entries.filter((entry) =>
    entry.items.some((field) => scalarText(field.key) === 'name' && scalarText(field.value) === name),
  );
  if (named.length !== 1)
    return refuse(
      named.length === 0
        ? `keys lists no key named ${JSON.stringify(name)}`
        : `keys lists ${named.length} keys named ${JSON.stringify(name)}`,
    );
  const fields = (named[0] as CST.BlockMap | CST.FlowCollection).items.filter(
    (field) => scalarText(field.key) === 'key',
  );
  if (fields.length !== 1)
    return refuse(`the key named ${JSON.stringify(name)} has ${fields.length === 0 ? 'no' : 'several'} key fields`);
  const field = fields[0] as CST.CollectionItem;
  if (field.sep?.some((t) => t.type === 'anchor' || t.type === 'tag'))
    return refuse(`the key of ${JSON.stringify(name)} carries an anchor or a tag; edit it by hand`);
  const value = field.value;
  if (
    !value ||
    !(value.type === 'scalar' || value.type === 'single-quoted-scalar' || value.type === 'double-quoted-scalar')
  ) {
    return refuse(`the key of ${JSON.stringify(name)} is not a single-line string; write it on one line`);
  }
  return { ok: true, value: value as Scalar };
}

/** True when `text` is one clean YAML document whose key named `name` is `key`. */
function readsBackAs(text: string, name: string, key: string): boolean {
  const doc = parseDocument(text);
  if (doc.errors.length > 0) return false;
  const keys = (doc.toJS() as { keys?: Array<{ name?: unknown; key?: unknown }> }).keys;
  return Array.isArray(keys) && keys.some((k) => k?.name === name && k.key === key);
}
