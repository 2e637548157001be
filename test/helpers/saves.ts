// The ways editors and tools save a file, done synchronously so a sequence of them lands within a
// millisecond or two — the timing that `sed -i` twice, formatters and `git checkout` produce.
import { execFileSync } from 'node:child_process';
import { renameSync, unlinkSync, writeFileSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';

/** in place: truncate and write; rename: temp file renamed over; recreate: delete, then write anew. */
export type SaveKind = 'inPlace' | 'rename' | 'recreate';

let tmpCount = 0;

/** Saves `text` to `file` the way `kind` says. */
export function save(file: string, kind: SaveKind, text: string): void {
  if (kind === 'inPlace') {
    writeFileSync(file, text);
  } else if (kind === 'rename') {
    const tmp = join(dirname(file), `.${basename(file)}.save-${process.pid}-${tmpCount++}`);
    writeFileSync(tmp, text);
    renameSync(tmp, file);
  } else {
    unlinkSync(file);
    writeFileSync(file, text);
  }
}

/** Mixed bursts of saves; each ends with the bytes that must end up served. */
export const SEQUENCES: SaveKind[][] = [
  ['rename', 'rename'],
  ['rename', 'rename', 'inPlace'],
  ['inPlace', 'inPlace', 'inPlace'],
  ['rename', 'inPlace', 'rename'],
  ['recreate', 'rename'],
  ['rename', 'recreate', 'inPlace'],
  ['inPlace', 'rename', 'rename', 'rename'],
  ['recreate'],
  ['rename'],
  ['inPlace'],
];

/**
 * Runs burst `round` of SEQUENCES (cycling) against `file`, each save writing `textFor(step)`.
 * Returns the final text.
 */
export function saveBurst(file: string, round: number, textFor: (step: number) => string): string {
  const kinds = SEQUENCES[round % SEQUENCES.length] as SaveKind[];
  let text = '';
  kinds.forEach((kind, step) => {
    text = textFor(step);
    save(file, kind, text);
  });
  return text;
}

/** True when a `sed` that understands `-i` is on the PATH. */
export function hasSed(): boolean {
  try {
    execFileSync('sed', ['--version'], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
}

/** `sed -i <script> file`: GNU sed writes a temporary file and renames it over the file. */
export function sedInPlace(file: string, script: string): void {
  execFileSync('sed', ['-i', script, file]);
}
