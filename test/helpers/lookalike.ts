// Serving the look-alike examples (examples/look-alike/<name>/mockapi.yaml) for the SDK tests, over
// HTTP or over HTTPS with the project's generated CA, and reading their journal.
import { copyFile, readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { parseDocument } from 'yaml';
import { removeDir, ROOT, startServe, stopAll, tempDir, waitFor, writeConfig, type ServeProcess } from './cli.js';

/** A journal entry, the fields the SDK tests read. */
export interface Entry {
  time: string;
  path: string;
  status: number;
  step: string;
  notes: string[];
}

/** A field path of the example's YAML and the value to set there. */
export type Change = [Array<string | number>, unknown];

/** A served example: the process, the example's `apiKey`, and over HTTPS the CA that signed its certificate. */
export type ServedExample = ServeProcess & { key: string; dir: string };

/** The example's plan limited to one request a second: the second request gets a 429 with Retry-After: 1. */
export const TIGHT_LIMIT: Change = [['limits', 'rateLimit'], { requests: 1, window: '1s' }];

/**
 * The example's plan limited to one request an hour: the second request gets a 429 however slow
 * the machine is between the two (Retry-After: about 3600).
 */
export const HOUR_LIMIT: Change = [['limits', 'rateLimit'], { requests: 1, window: '1h' }];

const made: string[] = [];

/** Stops every served example and removes their folders (for afterAll). */
export async function stopExamples(): Promise<void> {
  await stopAll();
  await Promise.all(made.splice(0).map(removeDir));
}

/**
 * Serves `examples/look-alike/<name>/mockapi.yaml` on port 0 (and, with `https`, on an HTTPS port
 * 0 too, the CA made in a fresh folder beside the config), with `changes` (field path → value)
 * applied: a tight rate limit or a failing endpoint for one test.
 */
export async function serveExample(
  name: string,
  changes: Change[] = [],
  options: { https?: boolean } = {},
): Promise<ServedExample> {
  const doc = parseDocument(await readFile(join(ROOT, 'examples', 'look-alike', name, 'mockapi.yaml'), 'utf8'));
  for (const [path, value] of changes) doc.setIn(path, value);
  const dir = await tempDir(`mockapi-sdk-${name}-`);
  made.push(dir);
  // The files the config names beside it (its OpenAPI description).
  const folder = join(ROOT, 'examples', 'look-alike', name);
  for (const entry of await readdir(folder, { withFileTypes: true })) {
    if (entry.isFile() && entry.name !== 'mockapi.yaml')
      await copyFile(join(folder, entry.name), join(dir, entry.name));
  }
  const args = [
    '-c',
    await writeConfig(dir, doc.toString()),
    '--no-state',
    '--no-watch',
    '--log',
    'off',
    ...(options.https === true ? ['--https', '0'] : []),
  ];
  const proc = await startServe(args, { cwd: dir });
  return Object.assign(proc, { key: String(doc.get('apiKey')), dir });
}

/** The journal once it holds at least `count` entries (oldest first), of `path` only when given. */
export async function journal(proc: ServeProcess, count: number, path?: string): Promise<Entry[]> {
  return waitFor(async () => {
    const { requests } = (await (await fetch(`${proc.url}/__mockapi/requests`)).json()) as { requests: Entry[] };
    const mine = path === undefined ? requests : requests.filter((e) => e.path === path);
    return mine.length >= count ? mine : undefined;
  });
}

/** Milliseconds between two journal entries. */
export const gapMs = (a: Entry, b: Entry): number => Date.parse(b.time) - Date.parse(a.time);
