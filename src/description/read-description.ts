import { realpath, stat } from 'node:fs/promises';
import { dirname, relative, resolve } from 'node:path';
import { describeFsError } from '../describe-fs-error.js';
import { descriptionFiles, MAX_DESCRIPTION_BYTES, type RefFolder } from './description-files.js';
import { isObject, resolvePointer, type Json, type JsonObject } from './json-pointer.js';

/** A description read and bundled: every `$ref` into another file is now local (`#/…`). */
export type ReadResult =
  | {
      ok: true;
      doc: JsonObject;
      version: string;
      /** sha256 of the files read (see DescriptionFiles.digest). */ digest: string;
    }
  | { ok: false; message: string };

interface ParserError extends Error {
  source?: string;
  targetRef?: string;
  ioErrorCode?: string;
}

/** `file` as the user should read it: relative to the working folder when that is shorter. */
function shown(file: string | undefined): string {
  if (file === undefined) return 'the description';
  const rel = relative(process.cwd(), file);
  return rel !== '' && !rel.startsWith('..') && rel.length < file.length ? rel : file;
}

/** One line for what the parser threw: the broken `$ref` named with its file and JSON pointer. */
function describeParserError(err: ParserError, entry: string): string {
  switch (err.name) {
    case 'MissingPointerError':
      return `broken $ref: ${shown(err.source)} has nothing at ${err.targetRef ?? 'the JSON pointer'}`;
    case 'ResolverError': {
      const file = shown(err.source);
      const code = err.ioErrorCode ?? /\b(E[A-Z]+)\b/.exec(err.message)?.[1];
      if (err.source !== undefined && err.source === entry)
        return `cannot read ${file}: ${describeFsError({ code, message: code ?? 'cannot be read' })}`;
      if (/^https?:/.test(err.source ?? ''))
        return `broken $ref: ${err.source} is a remote reference; mockapi import reads local files only (download it and point the $ref at the copy)`;
      return `broken $ref: cannot read ${file}: ${describeFsError({ code, message: code ?? 'cannot be read' })}`;
    }
    case 'ParserError':
      return `${shown(err.source ?? entry)} is not valid YAML or JSON: ${err.message.split('\n')[0]?.replace(/^Error parsing [^:]+: /, '')}`;
    default:
      return `cannot read ${shown(entry)}: ${err.message.split('\n')[0]}`;
  }
}

/** Why `doc` is not an OpenAPI 3.0/3.1 document, or undefined when it is one. */
function versionProblem(doc: Json, file: string): string | undefined {
  const name = shown(file);
  if (!isObject(doc)) return `${name} is not an OpenAPI document (its top level is not a mapping)`;
  if (doc.swagger !== undefined) {
    return `${name} is Swagger ${String(doc.swagger)}; mockapi imports OpenAPI 3.0 and 3.1 only. Convert it first, e.g. \`npx swagger2openapi ${name} -o openapi.yaml\`, then import openapi.yaml`;
  }
  if (doc.openapi === undefined) return `${name} is not an OpenAPI document (no \`openapi:\` version field)`;
  const version = String(doc.openapi);
  if (!/^3\.[01]\.\d+/.test(version)) return `${name} is OpenAPI ${version}; mockapi imports OpenAPI 3.0 and 3.1 only`;
  if (!isObject(doc.paths) && doc.paths !== undefined) return `${name}: \`paths\` must be a mapping`;
  return undefined;
}

/** The folders `$ref`s may read from: the description's own and each of `allowed`, or why one cannot be used. */
async function refFolders(file: string, allowed: readonly string[]): Promise<RefFolder[] | string> {
  const own = dirname(file);
  const folders: RefFolder[] = [{ given: own, real: await realpath(own).catch(() => own) }];
  for (const dir of allowed) {
    const given = resolve(dir);
    try {
      const real = await realpath(given);
      if (!(await stat(real)).isDirectory()) return `--allow-refs-under ${dir}: not a folder`;
      folders.push({ given, real });
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code;
      return `--allow-refs-under ${dir}: ${code === 'ENOENT' || code === 'ENOTDIR' ? 'no such folder' : describeFsError(err)}`;
    }
  }
  return folders;
}

/** What else a description may be read with. */
export interface ReadOptions {
  /** Folders outside the description's own whose files its `$ref`s may read. */
  allowRefsUnder?: readonly string[];
}

/**
 * Reads an OpenAPI description (YAML or JSON) and bundles the files its `$ref`s point into, with
 * @readme/openapi-parser, loaded here and nowhere else so that `serve` never evaluates it. Every
 * file is read by description-files.ts: only inside the description's folder (and the folders of
 * `allowRefsUnder`), never a URL, within the size and alias bounds. Never throws.
 */
export async function readDescription(file: string, options: ReadOptions = {}): Promise<ReadResult> {
  const folders = await refFolders(file, options.allowRefsUnder ?? []);
  if (typeof folders === 'string') return { ok: false, message: folders };
  const files = descriptionFiles(file, folders, shown);
  let doc: unknown;
  // A description in one file, all of whose `$ref`s are local, needs no bundling: the bundler's cost
  // (a URL parsed per `$ref`) is most of an import of a large single-file description.
  let entry: unknown;
  try {
    entry = await files.resolve.file.read({ url: file });
  } catch (err) {
    return { ok: false, message: files.problem() ?? `cannot read ${shown(file)}: ${(err as Error).message}` };
  }
  const refs = isObject(entry) ? localRefs(entry) : undefined;
  if (refs !== undefined) {
    const broken = refs.find((ref) => resolvePointer(entry as Json, ref) === undefined);
    if (broken !== undefined) return { ok: false, message: `broken $ref: ${shown(file)} has nothing at ${broken}` };
    return checked(entry as Json, file, files.digest());
  }
  const { bundle } = await import('@readme/openapi-parser');
  try {
    // The parser's option type knows only its own resolver shapes; ours has the same fields.
    doc = await bundle(file, { resolve: files.resolve as never });
  } catch (err) {
    return { ok: false, message: files.problem() ?? describeParserError(err as ParserError, file) };
  }
  return checked(doc as Json, file, files.digest());
}

/**
 * Why the description `file` cannot be read at all, from its `stat` alone (missing, a folder, not a
 * regular file, too large); undefined when it is a file that may be read. Worded as
 * {@link readDescription} words the same problems; nothing is read or parsed.
 */
export async function entryProblem(file: string): Promise<string | undefined> {
  try {
    const info = await stat(file);
    if (info.isDirectory()) return `cannot read ${shown(file)}: it is a folder`;
    if (!info.isFile()) return `cannot read ${shown(file)}: it is not a regular file`;
    if (info.size > MAX_DESCRIPTION_BYTES)
      return `${shown(file)} is larger than ${MAX_DESCRIPTION_BYTES / 1024 / 1024} MiB; mockapi import reads descriptions of up to ${MAX_DESCRIPTION_BYTES / 1024 / 1024} MiB per file`;
    return undefined;
  } catch (err) {
    return `cannot read ${shown(file)}: ${describeFsError(err)}`;
  }
}

/** The read description, or why it is not an OpenAPI 3.0/3.1 document. */
function checked(doc: Json, file: string, digest: string): ReadResult {
  const problem = versionProblem(doc, file);
  if (problem !== undefined) return { ok: false, message: problem };
  const object = doc as JsonObject;
  return { ok: true, doc: object, version: String(object.openapi), digest };
}

/** Every `$ref` of a document when all of them are local (`#/…`); undefined when one names another file. */
function localRefs(doc: JsonObject): string[] | undefined {
  const refs: string[] = [];
  const stack: Json[] = [doc];
  while (stack.length > 0) {
    const node = stack.pop() as Json;
    if (Array.isArray(node)) for (const item of node) stack.push(item);
    else if (isObject(node)) {
      for (const [key, value] of Object.entries(node)) {
        if (key === '$ref' && typeof value === 'string') {
          if (!value.startsWith('#')) return undefined;
          refs.push(value);
        } else if (value !== null && typeof value === 'object') stack.push(value);
      }
    }
  }
  return refs;
}
