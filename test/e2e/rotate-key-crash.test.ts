import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { execFile, spawn } from 'node:child_process';
import { mkdtemp, readdir, readFile, rm, stat, writeFile, chmod } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';
import { cleanupTempFiles } from '../../src/state/atomic-write.js';
import { parseConfig } from '../../src/config/load.js';
import { replaceApiKey } from '../../src/config/replace-api-key.js';

/**
 * SIGKILL a process that rotates the key in a loop, at varied moments, and check after every kill
 * that the config is one whole version (never half-written, never missing), parses, and kept its
 * mode; then that cleanupTempFiles removes what the killed writers left.
 */

const ROUNDS = 20;
const VERSIONS = 6;
const repo = resolve(import.meta.dirname, '..', '..');
let work: string;

beforeAll(async () => {
  work = await mkdtemp(join(tmpdir(), 'mockapi-crash-'));
  // The child runs the real writeFileAtomic, compiled from source for this test.
  const tsc = join(repo, 'node_modules', 'typescript', 'bin', 'tsc');
  await promisify(execFile)(
    process.execPath,
    [
      tsc,
      join(repo, 'src', 'state', 'atomic-write.ts'),
      '--ignoreConfig',
      '--outDir',
      join(work, 'lib'),
      '--module',
      'nodenext',
      '--moduleResolution',
      'nodenext',
      '--target',
      'es2022',
      '--types',
      'node',
      '--skipLibCheck',
    ],
    { cwd: repo },
  );
  await writeFile(
    join(work, 'child.mjs'),
    `import { readFileSync } from 'node:fs';
import { writeFileAtomic } from './lib/atomic-write.js';
const [target, versionsFile] = process.argv.slice(2);
const versions = JSON.parse(readFileSync(versionsFile, 'utf8'));
for (let i = 1; ; i++) {
  await writeFileAtomic(target, versions[i % versions.length]);
  process.stdout.write(i + '\\n');
}
`,
  );
}, 60_000);

afterAll(async () => {
  await rm(work, { recursive: true, force: true });
});

/** Large enough that a kill often lands in the middle of writing the temporary file. */
function baseConfig(): string {
  const padding = Array.from(
    { length: 4000 },
    (_, i) => `# padding line ${i} ........................................`,
  ).join('\n');
  return `# crash test\nproject: crash\napiKey: mk_version0   # the key\n${padding}\nlimits:\n  monthlyQuota: 5\n`;
}

function killAfter(child: ReturnType<typeof spawn>, writes: number, extraMs: number): Promise<void> {
  return new Promise((done, fail) => {
    let seen = 0;
    child.stdout?.on('data', (chunk: Buffer) => {
      seen += chunk.toString().split('\n').filter(Boolean).length;
      if (seen >= writes && child.exitCode === null && !child.killed) setTimeout(() => child.kill('SIGKILL'), extraMs);
    });
    child.once('exit', () => done());
    child.once('error', fail);
  });
}

describe('writeFileAtomic under SIGKILL', () => {
  it(`leaves a whole version every time (${ROUNDS} kills), and cleanup removes leftovers`, async () => {
    const dir = await mkdtemp(join(work, 'cfg-'));
    const target = join(dir, 'mockapi.yaml');
    const versions = [baseConfig()];
    for (let v = 1; v < VERSIONS; v++) {
      const next = replaceApiKey(versions[v - 1] as string, `mk_version${v}`);
      if (!next.ok) throw new Error(next.reason);
      versions.push(next.text);
    }
    await writeFile(join(work, 'versions.json'), JSON.stringify(versions));
    await writeFile(target, versions[0] as string);
    await chmod(target, 0o640);

    for (let round = 0; round < ROUNDS; round++) {
      const child = spawn(process.execPath, [join(work, 'child.mjs'), target, join(work, 'versions.json')], {
        stdio: ['ignore', 'pipe', 'inherit'],
      });
      // Vary the moment: after 1–4 completed writes, plus 0–3 ms into the next one.
      await killAfter(child, 1 + (round % 4), round % 4);
      expect(child.signalCode).toBe('SIGKILL');

      const text = await readFile(target, 'utf8');
      expect(versions).toContain(text);
      const parsed = await parseConfig(Buffer.from(text), target);
      expect(parsed.ok).toBe(true);
      expect((await stat(target)).mode & 0o777).toBe(0o640);
    }

    const leftovers = (await readdir(dir)).filter((n) => n.includes('.mockapi-tmp-'));
    const removed = await cleanupTempFiles(target);
    expect(removed.map((p) => p.slice(dir.length + 1)).sort()).toEqual(leftovers.sort());
    expect(await readdir(dir)).toEqual(['mockapi.yaml']);
  }, 60_000);
});
