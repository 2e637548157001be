import { relative } from 'node:path';
import { describeFsError } from '../state/describe-fs-error.js';
import { isObject, type Json, type JsonObject } from './json-pointer.js';

/** A description read and bundled: every `$ref` into another file is now local (`#/…`). */
export type ReadResult = { ok: true; doc: JsonObject; version: string } | { ok: false; message: string };

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
      if (err.source !== undefined && err.source === entry) return `cannot read ${file}: ${describeFsError({ code, message: code ?? 'cannot be read' })}`;
      if (/^https?:/.test(err.source ?? '')) return `broken $ref: ${err.source} is a remote reference; mockapi import reads local files only (download it and point the $ref at the copy)`;
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

/**
 * Reads an OpenAPI description (YAML or JSON) and bundles the files its `$ref`s point into, with
 * @readme/openapi-parser, loaded here and nowhere else so that `serve` never evaluates it. Remote
 * (`http:`) references are not followed: an import reads local files only. Never throws.
 */
export async function readDescription(file: string): Promise<ReadResult> {
  const { bundle } = await import('@readme/openapi-parser');
  let doc: unknown;
  try {
    // `http: false` is honoured by the underlying json-schema-ref-parser; the type only knows its options object.
    doc = await bundle(file, { resolve: { http: false as never } });
  } catch (err) {
    return { ok: false, message: describeParserError(err as ParserError, file) };
  }
  const problem = versionProblem(doc as Json, file);
  if (problem !== undefined) return { ok: false, message: problem };
  const object = doc as JsonObject;
  return { ok: true, doc: object, version: String(object.openapi) };
}
