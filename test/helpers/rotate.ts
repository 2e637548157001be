import { spawn, type ChildProcess } from 'node:child_process';
import { createHash } from 'node:crypto';
import { runRotateKey, type RotateKeyDeps } from '../../src/cli/commands/rotate-key.js';

export const sha256 = (data: Buffer | string): string => createHash('sha256').update(data).digest('hex');

export interface RotateRun {
  code: number;
  out: string[];
  err: string[];
}

/** runRotateKey with captured stdout and stderr lines. */
export async function rotateIn(
  config: string,
  opts: { key?: string; name?: string } = {},
  deps?: RotateKeyDeps,
): Promise<RotateRun> {
  const out: string[] = [];
  const err: string[] = [];
  const code = await runRotateKey({ config, ...opts }, { out: (l) => out.push(l), err: (l) => err.push(l) }, deps);
  return { code, out, err };
}

/**
 * An editor in another process: `saves` times it reads the file, sets its last line to
 * `# edit <n>` (appending it the first time) and saves —
 * odd saves in place (truncate and write, as most editors' plain save), even ones by writing a
 * temporary file and renaming it over (an "atomic" save) — with 0–2 ms between saves.
 * Resolves `started` after its first save and `done` with the number of its last save.
 */
export function startEditor(
  file: string,
  saves: number,
): { started: Promise<void>; done: Promise<number>; child: ChildProcess } {
  const script = `
const { readFileSync, writeFileSync, renameSync } = require('node:fs');
const [file, saves] = [process.argv[1], Number(process.argv[2])];
const pause = new Int32Array(new SharedArrayBuffer(4));
let last = 0;
for (let i = 1; i <= saves; i++) {
  let text;
  for (;;) {
    try { text = readFileSync(file, 'utf8'); break; } catch (err) { if (err.code !== 'ENOENT') throw err; }
  }
  text = text.replace(/# edit \\d+\\n$/, '') + '# edit ' + i + '\\n';
  if (i % 2) writeFileSync(file, text);
  else { writeFileSync(file + '.editor-tmp', text); renameSync(file + '.editor-tmp', file); }
  last = i;
  if (i === 1) process.stdout.write('started\\n');
  Atomics.wait(pause, 0, 0, Math.floor(Math.random() * 3));
}
process.stdout.write('done ' + last + '\\n');
`;
  const child = spawn(process.execPath, ['-e', script, file, String(saves)], { stdio: ['ignore', 'pipe', 'inherit'] });
  let output = '';
  let markStarted: () => void = () => {};
  const started = new Promise<void>((done) => (markStarted = done));
  child.stdout!.on('data', (d) => {
    output += d;
    if (output.includes('started')) markStarted();
  });
  const done = new Promise<number>((resolve, reject) => {
    child.on('error', reject);
    child.on('close', (code) => {
      const match = /done (\d+)/.exec(output);
      if (code === 0 && match) resolve(Number(match[1]));
      else reject(new Error(`editor exited with ${code}: ${output}`));
    });
  });
  return { started, done, child };
}
