import type { Redactor } from '../redact/redactor.js';
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
  if (scrubbed !== text) hits.push({ index: firstDifference(text, scrubbed), what: 'a credential of the mock or the upstream' });
  return hits.sort((a, b) => a.index - b.index);
}

/**
 * The last check before writing: the recorded blocks of the new config text and every body file
 * are scanned for known credentials (in each encoding the one redactor knows) and known secret
 * shapes. Any hit refuses the write. Binary files are scanned as Latin-1 text.
 */
export function scanForSecrets(shownConfig: string, text: string, blocks: readonly WrittenBlock[], files: Iterable<BodyFile>, known: Redactor): ScanHit[] {
  const hits: ScanHit[] = [];
  for (const block of blocks) {
    for (const hit of scanText(block.text, known)) hits.push({ where: `${shownConfig}:${lineColumn(text, block.start + hit.index)}`, what: hit.what });
  }
  for (const file of files) {
    const content = file.bytes.toString(file.binary ? 'latin1' : 'utf8');
    for (const hit of scanText(content, known)) hits.push({ where: `${file.path} (${file.binary ? 'byte' : 'character'} ${hit.index})`, what: hit.what });
  }
  return hits;
}
