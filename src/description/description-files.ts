import { createHash } from 'node:crypto';
import { open, realpath, stat, type FileHandle } from 'node:fs/promises';
import { isAbsolute, relative, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import { CORE_SCHEMA, load } from 'js-yaml';
import { expandedSize } from '../expanded-size.js';
import { describeFsError } from '../describe-fs-error.js';

/**
 * How `mockapi import` reads the files of a description: the one reader the $ref parser is given
 * for every file it wants, the description itself and each file a `$ref` names. It reads only
 * files inside the allowed folders (judged by the real path, after symlinks), never a URL, no file
 * over MAX_DESCRIPTION_BYTES, and refuses YAML whose aliases expand past MAX_EXPANDED_DESCRIPTION.
 */

/** Description files (the description and each file its `$ref`s name) larger than this are refused. */
export const MAX_DESCRIPTION_BYTES = 50 * 1024 * 1024;
/** What a description file's YAML aliases may expand to, measured as JSON text; beyond, an alias bomb. */
export const MAX_EXPANDED_DESCRIPTION = 2 * MAX_DESCRIPTION_BYTES;

/** A file the $ref parser asks for, as json-schema-ref-parser hands it to a resolver. */
interface ParserFile {
  url: string;
  /** The `$ref` as written (without its `#…`); absent for the description itself. */
  reference?: string;
  /** The file (and JSON pointer) holding that `$ref`. */
  baseUrl?: string;
}

/** A json-schema-ref-parser resolver. */
interface Resolver {
  order: number;
  canRead: boolean | (() => boolean);
  read(file: ParserFile): Promise<unknown>;
}

export interface DescriptionFiles {
  /** The parser's `resolve` option: this reader for every file; the parser's own downloader never runs. */
  resolve: { file: Resolver; http: { canRead: () => boolean } };
  /** Why reading stopped, worded for the user; undefined when no file was refused. */
  problem(): string | undefined;
  /** sha256 of the files read so far, each named by its path (in path order: the same files give the same digest, whatever order they were read in). */
  digest(): string;
}

/** Files the parser reads as text or bytes itself (its text and binary parsers): no YAML is read from them. */
const RAW_FILE = /\.(txt|htm|html|md|xml|js|min|map|css|scss|less|svg|jpeg|jpg|gif|png|bmp|ico)$/i;
/** A URL scheme (two characters at least, so that `C:` stays a drive). */
const URL_SCHEME = /^[a-z][a-z\d+.-]+:/i;

/** Whether `path` is `folder` or inside it. */
function isInside(path: string, folder: string): boolean {
  const rel = relative(folder, path);
  return rel === '' || (rel !== '..' && !rel.startsWith(`..${sep}`) && !isAbsolute(rel));
}

/** A folder `$ref`s may read from: as the user named it (absolute) and its real path. */
export interface RefFolder {
  given: string;
  real: string;
}

/** The file-system path of a parser URL (`/a/b%20c.yaml`, `file:///…`). */
function pathOf(url: string): string {
  if (/^file:/i.test(url)) return fileURLToPath(url);
  try {
    return decodeURI(url);
  } catch {
    return url;
  }
}

/** A refusal: its message is what the user reads. */
class Refused extends Error {}

/**
 * The bytes of `path`, at most `MAX_DESCRIPTION_BYTES` of them. A regular file is read in one
 * buffer of the size `stat` gives (a description of thousands of files allocates what they hold,
 * not a chunk per file); where the size is not known (a pipe), in chunks, bounded while reading.
 */
async function readBounded(path: string, tooBig: () => string): Promise<Buffer> {
  const handle = await open(path, 'r');
  try {
    const info = await handle.stat();
    if (info.isFile() && info.size > MAX_DESCRIPTION_BYTES) throw new Refused(tooBig());
    if (info.isFile()) {
      // One byte more than stat says: a file that grew since is read in chunks below.
      const bytes = Buffer.allocUnsafe(info.size + 1);
      let total = 0;
      for (;;) {
        const { bytesRead } = await handle.read(bytes, total, bytes.length - total, null);
        if (bytesRead === 0) return bytes.subarray(0, total);
        total += bytesRead;
        if (total === bytes.length) return Buffer.concat([bytes, await readChunks(handle, total, tooBig)]);
      }
    }
    return await readChunks(handle, 0, tooBig);
  } finally {
    await handle.close();
  }
}

/** The rest of an open file read in chunks, `already` bytes read before; refused past `MAX_DESCRIPTION_BYTES`. */
async function readChunks(handle: FileHandle, already: number, tooBig: () => string): Promise<Buffer> {
  const chunks: Buffer[] = [];
  let total = already;
  for (;;) {
    const chunk = Buffer.allocUnsafe(Math.min(64 * 1024, MAX_DESCRIPTION_BYTES + 1 - total));
    const { bytesRead } = await handle.read(chunk, 0, chunk.length, null);
    if (bytesRead === 0) break;
    chunks.push(chunk.subarray(0, bytesRead));
    total += bytesRead;
    if (total > MAX_DESCRIPTION_BYTES) throw new Refused(tooBig());
  }
  return Buffer.concat(chunks, total - already);
}

/**
 * The data of a description file's text: JSON, or YAML read by js-yaml with the core schema. An
 * aliased value stays one shared object, so a "billion laughs" costs no more to read than its
 * text; its expanded size is then measured (shared values once) and refused past the bound.
 */
function parseText(text: string, json: boolean, name: string): unknown {
  const body = text.charCodeAt(0) === 0xfeff ? text.slice(1) : text;
  if (json || /^\s*[[{]/.test(body)) {
    try {
      return JSON.parse(body);
    } catch (err) {
      if (json) throw new Refused(`${name} is not valid YAML or JSON: ${(err as Error).message}`);
    }
  }
  let data: unknown;
  try {
    data = load(body, { schema: CORE_SCHEMA });
  } catch (err) {
    throw new Refused(`${name} is not valid YAML or JSON: ${(err as Error).message.split('\n')[0]}`);
  }
  if (expandedSize(data, MAX_EXPANDED_DESCRIPTION) > MAX_EXPANDED_DESCRIPTION) {
    throw new Refused(
      `${name}: its YAML aliases expand to more than ${MAX_EXPANDED_DESCRIPTION / 1024 / 1024} MiB of data; refused as a possible alias bomb`,
    );
  }
  return data;
}

/**
 * What the parser gets for `data`: an object as it is (the parser's own JSON and YAML parsers
 * pass objects through untouched, so they never read the text again), anything else as JSON text.
 */
function forParser(data: unknown): unknown {
  if (data !== null && typeof data === 'object') return data;
  return data === undefined || data === null ? Buffer.alloc(0) : Buffer.from(JSON.stringify(data));
}

/**
 * The reader for the description `entry` (an absolute path) whose `$ref`s may read files inside
 * `folders` (real paths: the description's own folder and any the user allowed). `shown` words a
 * path for messages.
 */
export function descriptionFiles(
  entry: string,
  folders: RefFolder[],
  shown: (path: string) => string,
): DescriptionFiles {
  let problem: string | undefined;
  const digests = new Map<string, string>();
  const where = (file: ParserFile): string =>
    `$ref \`${file.reference ?? file.url}\` in ${shown(pathOf((file.baseUrl ?? entry).replace(/#.*$/, '')))}`;
  const folderList = folders.map((f) => `${shown(f.given)}/`.replace(/^\/\/$/, '/')).join(' and ');

  async function readChecked(file: ParserFile): Promise<unknown> {
    if (URL_SCHEME.test(file.url) && !/^file:/i.test(file.url)) {
      throw new Refused(
        `${where(file)} is a URL; mockapi import reads local files only (download it and point the $ref at the copy)`,
      );
    }
    const path = pathOf(file.url).replace(/(.)[\\/]+$/, '$1');
    let target = path;
    if (path !== entry) {
      let missing: unknown;
      const real = await realpath(path).catch((err: unknown) => void (missing = err));
      target = real ?? path;
      if (
        !folders.some((folder) => isInside(target, folder.real) || (real === undefined && isInside(path, folder.given)))
      ) {
        throw new Refused(
          `${where(file)} points to ${shown(target)}, outside ${folderList}; mockapi import reads only files inside the description's folder (name another folder with --allow-refs-under <dir>)`,
        );
      }
      // Only a path whose real place was checked is opened.
      if (real === undefined) throw new Refused(`broken $ref: cannot read ${shown(path)}: ${describeFsError(missing)}`);
      const info = await stat(target).catch(() => undefined);
      if (info !== undefined && !info.isFile())
        throw new Refused(`${where(file)} points to ${shown(target)}, which is not a regular file`);
    }
    const tooBig = (): string =>
      `${shown(target)} is larger than ${MAX_DESCRIPTION_BYTES / 1024 / 1024} MiB; mockapi import reads descriptions of up to ${MAX_DESCRIPTION_BYTES / 1024 / 1024} MiB per file`;
    let bytes: Buffer;
    try {
      bytes = await readBounded(target, tooBig);
    } catch (err) {
      if (err instanceof Refused) throw err;
      const reason = describeFsError(err);
      throw new Refused(
        path === entry ? `cannot read ${shown(path)}: ${reason}` : `broken $ref: cannot read ${shown(path)}: ${reason}`,
      );
    }
    digests.set(target, createHash('sha256').update(bytes).digest('hex'));
    if (RAW_FILE.test(path)) return bytes;
    return forParser(parseText(bytes.toString('utf8'), /\.json$/i.test(path), shown(path)));
  }

  const file: Resolver = {
    order: 1,
    canRead: true,
    async read(requested) {
      try {
        return await readChecked(requested);
      } catch (err) {
        problem ??=
          err instanceof Refused
            ? err.message
            : `cannot read ${shown(pathOf(requested.url))}: ${(err as Error).message}`;
        throw err;
      }
    },
  };
  const digest = (): string => {
    const hash = createHash('sha256');
    for (const path of [...digests.keys()].sort()) hash.update(`${path}\0${digests.get(path)}\0`);
    return hash.digest('hex');
  };
  return { resolve: { file, http: { canRead: () => false } }, problem: () => problem, digest };
}
