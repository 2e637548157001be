import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { Logger } from '../logger.js';
import { writeFileAtomic } from '../state/atomic-write.js';
import { ensureMockapiDir, MOCKAPI_DIR } from '../state/mockapi-dir.js';
import { setStateAside } from '../state/state-file.js';
import type { MemoryResourceStore } from './memory-store.js';
import type { HistoryEntry, StoredObject } from './store.js';

/**
 * `resources.persist: true`: the objects of the default session are written to
 * `.mockapi/resources.json` when the server stops (atomically: the old file or the new one,
 * whole) and read back when it starts; a file that cannot be read as one is set aside with a
 * warning, and the collections start from their seed.
 */

/** Where the objects are kept, beside the config. */
export function resourcesFile(configDir: string): string {
  return join(configDir, MOCKAPI_DIR, 'resources.json');
}

interface FileObject {
  id: string;
  seq: number;
  parent: string;
  since: number;
  created: number;
  version: number;
  object: unknown;
  history?: HistoryEntry[];
}

interface FileShape {
  version: 1;
  collections: Record<string, { objects: FileObject[] }>;
}

const isNumber = (v: unknown): v is number => typeof v === 'number' && Number.isFinite(v);

function readShape(text: string): FileShape {
  const data = JSON.parse(text) as FileShape;
  if (
    data === null ||
    typeof data !== 'object' ||
    data.version !== 1 ||
    data.collections === null ||
    typeof data.collections !== 'object'
  )
    throw new Error('not a resources file of version 1');
  for (const [name, collection] of Object.entries(data.collections)) {
    if (!Array.isArray(collection?.objects)) throw new Error(`collections.${name}.objects is not a list`);
    for (const o of collection.objects) {
      if (
        typeof o?.id !== 'string' ||
        !isNumber(o.seq) ||
        typeof o.parent !== 'string' ||
        !isNumber(o.since) ||
        !isNumber(o.created) ||
        !isNumber(o.version) ||
        o.object === null ||
        typeof o.object !== 'object'
      ) {
        throw new Error(`an object of collections.${name} is not whole`);
      }
    }
  }
  return data;
}

/** Reads the file into `store` (the default session); returns the names of the collections it held. */
export async function loadResources(
  file: string,
  store: MemoryResourceStore,
  now: number,
  logger: Logger,
): Promise<string[]> {
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT')
      logger.warn(`cannot read ${file} (${(err as Error).message}); resources start from their seed`);
    return [];
  }
  let data: FileShape;
  try {
    data = readShape(text);
  } catch (err) {
    try {
      const aside = await setStateAside(file, now);
      logger.warn(
        `${file} is corrupt (${(err as Error).message}); moved it to ${aside} and resources start from their seed`,
      );
    } catch (moveErr) {
      logger.warn(
        `${file} is corrupt (${(err as Error).message}) and could not be moved aside (${(moveErr as Error).message}); resources start from their seed`,
      );
    }
    return [];
  }
  for (const [name, collection] of Object.entries(data.collections)) {
    const target = store.collection('', name);
    for (const o of [...collection.objects].sort((a, b) => a.seq - b.seq)) {
      const stored: StoredObject = {
        id: o.id,
        text: JSON.stringify(o.object),
        version: o.version,
        seq: o.seq,
        parent: o.parent,
        since: o.since,
        created: o.created,
      };
      target.restore(stored, o.history ?? []);
    }
    store.markSeeded('', name);
  }
  return Object.keys(data.collections);
}

/** Writes the default session's collections to the file. */
export async function saveResources(file: string, store: MemoryResourceStore, configDir: string): Promise<void> {
  const collections: FileShape['collections'] = {};
  for (const { scope, name, collection } of store.collections()) {
    if (scope !== '') continue;
    collections[name] = {
      objects: collection.all().map((o) => ({
        id: o.id,
        seq: o.seq,
        parent: o.parent,
        since: o.since,
        created: o.created,
        version: o.version,
        object: JSON.parse(o.text) as unknown,
        history: collection.history(o.id),
      })),
    };
  }
  await ensureMockapiDir(configDir);
  await writeFileAtomic(file, `${JSON.stringify({ version: 1, collections } satisfies FileShape, null, 1)}\n`);
}
