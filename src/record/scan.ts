import { isMap, isScalar, isSeq, parseDocument, visit, type Node } from 'yaml';
import { findSecretFields, type SecretField } from '../redact/json-fields.js';
import { REDACTED, type Redactor } from '../redact/redactor.js';
import { findSecretShapes } from '../redact/secret-shapes.js';
import type { BodyFile } from './leaves.js';
import type { WrittenBlock } from './render.js';

/** Where a secret was found in what a recording was about to write. */
export interface ScanHit {
  where: string;
  what: string;
}

function lineColumn(text: string, index: number): string {
  const before = text.slice(0, index);
  const line = before.split('\n').length;
  return `${line}:${index - before.lastIndexOf('\n')}`;
}

/** The first index where two texts differ (where a known credential was scrubbed). */
function firstDifference(a: string, b: string): number {
  let i = 0;
  while (i < a.length && a[i] === b[i]) i++;
  return i;
}

function scanText(text: string, known: Redactor): Array<{ index: number; what: string }> {
  const hits = findSecretShapes(text).map((h) => ({ index: h.index, what: h.name }));
  const scrubbed = known.scrub(text);
  if (scrubbed !== text)
    hits.push({ index: firstDifference(text, scrubbed), what: 'a credential of the mock or the upstream' });
  return hits.sort((a, b) => a.index - b.index);
}

/** A value a config may hold under a secret name: redacted, or a template (`${env.MOCKAPI_…}`) written by the user. */
const harmless = (value: string): boolean => value === REDACTED || /(^|[^$])\$\{/.test(value);

/** Secret-named fields of a written YAML block holding something in clear: where each value starts in `text`. */
function scanYamlFields(text: string, secret: SecretField): Array<{ index: number; what: string }> {
  const hits: Array<{ index: number; what: string }> = [];
  const check = (name: string, node: Node | null | undefined, inList: boolean): void => {
    if (isScalar(node)) {
      const kind = typeof node.value === 'string' ? 'string' : typeof node.value === 'number' ? 'number' : undefined;
      if (kind === undefined || !secret(name, kind) || (kind === 'string' && harmless(node.value as string))) return;
      hits.push({
        index: node.range?.[0] ?? 0,
        what: `a field named like a secret (${name}${inList ? '[]' : ''}) in clear`,
      });
    } else if (isSeq(node) && secret(name, 'string')) {
      for (const item of node.items) check(name, item as Node, true);
    }
  };
  const doc = parseDocument(text, { uniqueKeys: false });
  visit(doc, {
    Pair(_key, pair) {
      if (isScalar(pair.key) && !isMap(pair.value)) check(String(pair.key.value), pair.value as Node, false);
    },
  });
  return hits;
}

/** Secret-named fields of a written JSON text (any layout) holding something in clear. */
function scanJsonFields(text: string, secret: SecretField): Array<{ index: number; what: string }> {
  const hits = findSecretFields(text, secret) ?? [];
  return hits
    .filter((h) => text.slice(h.start, h.end) !== JSON.stringify(REDACTED))
    .map((h) => ({ index: h.start, what: `a field named like a secret (${h.name}) in clear` }));
}

/**
 * The last check before writing: the recorded blocks of the new config text and every body file
 * are scanned for known credentials (in each encoding the one redactor knows), known secret
 * shapes, and fields named like secrets (`secret` says which: the one list, and
 * `recording.redact.fields`) that hold anything but `<redacted>` — in the YAML of the blocks and in
 * JSON body files of any layout and size. Any hit refuses the write. Binary files are scanned as
 * Latin-1 text.
 */
export function scanForSecrets(
  shownConfig: string,
  text: string,
  blocks: readonly WrittenBlock[],
  files: Iterable<BodyFile>,
  known: Redactor,
  secret: SecretField,
): ScanHit[] {
  const hits: ScanHit[] = [];
  for (const block of blocks) {
    const found = [...scanText(block.text, known), ...scanYamlFields(block.text, secret)].sort(
      (a, b) => a.index - b.index,
    );
    for (const hit of found)
      hits.push({ where: `${shownConfig}:${lineColumn(text, block.start + hit.index)}`, what: hit.what });
  }
  for (const file of files) {
    const content = file.text ?? file.bytes.toString(file.binary ? 'latin1' : 'utf8');
    const found = file.binary
      ? scanText(content, known)
      : [...scanText(content, known), ...scanJsonFields(content, secret)].sort((a, b) => a.index - b.index);
    for (const hit of found)
      hits.push({ where: `${file.path} (${file.binary ? 'byte' : 'character'} ${hit.index})`, what: hit.what });
  }
  return hits;
}
