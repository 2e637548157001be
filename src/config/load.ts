import { createHash } from 'node:crypto';
import { readFile, stat } from 'node:fs/promises';
import { dirname, resolve } from 'node:path';
import { LineCounter, parseDocument, type Document, type YAMLError } from 'yaml';
import { countItems, expandedSize, firstAlias, surprisingKeys } from './yaml-guards.js';
import { buildConfig } from './build.js';
import { createIssueList, fileIssue, type IssueList } from './issues.js';
import { objectLocator, yamlLocator } from './locate.js';
import { checkRules } from './rules.js';
import { reportSchemaErrors } from './schema-issues.js';
import { validateSchema } from './schema-validator.generated.js';
import type { ConfigIssue, LoadResult } from './types.js';

/**
 * Config files larger than this are refused before they are parsed. A config with 10,000
 * endpoints is about 1.5 MB; anything past 5 MiB is a mistake or an attack.
 */
export const MAX_CONFIG_BYTES = 5 * 1024 * 1024;
/** YAML aliases may expand to at most this many nodes' worth (yaml's `maxAliasCount`); beyond, an alias bomb. */
export const MAX_ALIAS_COUNT = 100;
/**
 * What aliases and merge keys may expand the document to, measured as JSON text (escapes aside;
 * even all escapes keep every body well under V8's longest string). `MAX_ALIAS_COUNT` bounds how
 * often an anchor is reused, not how big it is: 99 aliases of a 4 MB anchor passed it, made a
 * 400 MB response body and `serve` fail with "Invalid string length" while `validate` said valid.
 */
export const MAX_EXPANDED_SIZE = 10 * MAX_CONFIG_BYTES;
/**
 * Lines plus commas a config may hold. The YAML reader costs about 10 µs and 1.5 KB per value, so a
 * 5 MiB file of tiny values (`[1,1,1,…]`) would take 15 s and 3 GB to read; this bound keeps the
 * worst case near 2 s. 10,000 typical endpoints are about 100,000 lines. Large bodies belong in a
 * `bodyFile`, which is sent as bytes and never parsed.
 */
export const MAX_CONFIG_ITEMS = 250_000;
/** The file label of a config given as an object. */
export const OBJECT_LABEL = '<config object>';

/** Reported when the YAML reader runs out of stack (thousands of nested brackets). */
const TOO_DEEP = 'the config is nested too deeply to be read';

const sha256 = (data: string | Buffer): string => createHash('sha256').update(data).digest('hex');

/**
 * `mockapi.yaml:14:15: endpoints[1].failRate must be between 0 and 1, got 1.5`. Issues without a
 * position (line 0: the file cannot be read, or the config is an object) are `mockapi.yaml: …`.
 */
export function formatIssue(issue: ConfigIssue): string {
  const where = issue.line > 0 ? `${issue.file}:${issue.line}:${issue.column}` : issue.file;
  return `${where}: ${issue.message}`;
}

function byPosition(a: ConfigIssue, b: ConfigIssue): number {
  return a.line - b.line || a.column - b.column;
}

function fail(issues: ConfigIssue[]): LoadResult {
  return { ok: false, issues: issues.sort(byPosition) };
}

/** Schema, then the rules the schema cannot express; a Config when nothing is wrong. */
function validate(data: unknown, issues: IssueList, dir: string, file: string | undefined, revision: string, buildFrom: () => unknown): LoadResult {
  if (!validateSchema(data)) reportSchemaErrors(validateSchema.errors ?? [], data, issues);
  checkRules(data, { issues, dir });
  if (issues.issues.length > 0) return fail(issues.issues);
  return { ok: true, config: buildConfig(buildFrom(), dir, file, revision) };
}

function yamlMessage(error: YAMLError, text: string): string {
  if (/call stack/i.test(error.message)) return TOO_DEEP;
  switch (error.code) {
    case 'DUPLICATE_KEY': {
      const key = /^[^:\n]{0,60}/.exec(text.slice(error.pos[0]))?.[0].trim() ?? '';
      return `${key === '' ? 'a key' : `\`${key}\``} appears twice in the same mapping; keep one`;
    }
    case 'MULTIPLE_DOCS':
      return 'the config file must hold a single YAML document (found a second `---`)';
    default:
      return `invalid YAML: ${error.message.split('\n')[0]}`;
  }
}

/**
 * YAML syntax problems and unresolved tags. Empty when the document is sound. (A list or mapping
 * used as a key is turned into its text, which then fails as an unknown field or header name.)
 */
function yamlIssues(doc: Document, lineCounter: LineCounter, file: string, text: string): ConfigIssue[] {
  return [...doc.errors, ...doc.warnings].map((e) => {
    const { line, col } = lineCounter.linePos(e.pos[0]);
    return fileIssue(file, yamlMessage(e, text), { line, column: col });
  });
}

/** The YAML document as plain data, or why it cannot be turned into data (alias bomb, undefined alias). */
function toData(doc: Document, lineCounter: LineCounter, file: string): { data: unknown } | { issue: ConfigIssue } {
  try {
    const data = doc.toJS({ maxAliasCount: MAX_ALIAS_COUNT });
    const alias = firstAlias(doc, lineCounter);
    if (alias !== undefined && expandedSize(data, MAX_EXPANDED_SIZE) > MAX_EXPANDED_SIZE) {
      const message = `the config's YAML aliases expand to more than ${MAX_EXPANDED_SIZE / 1024 / 1024} MiB of data; refused as a possible alias bomb`;
      return { issue: fileIssue(file, message, alias) };
    }
    return { data };
  } catch (err) {
    if (err instanceof RangeError) return { issue: fileIssue(file, TOO_DEEP) };
    const message = /excessive alias count/i.test((err as Error).message)
      ? `the config's YAML aliases expand to too much data (more than ${MAX_ALIAS_COUNT}× reuse); refused as a possible alias bomb`
      : `invalid YAML: ${(err as Error).message}`;
    return { issue: fileIssue(file, message, firstAlias(doc, lineCounter) ?? { line: 1, column: 1 }) };
  }
}

function parseUnsafe(bytes: Buffer | string, file: string): LoadResult {
  const size = typeof bytes === 'string' ? Buffer.byteLength(bytes) : bytes.length;
  if (size > MAX_CONFIG_BYTES) {
    return fail([fileIssue(file, `the config file is ${size} bytes, more than the ${MAX_CONFIG_BYTES}-byte (5 MiB) limit`)]);
  }
  let text: string;
  if (typeof bytes === 'string') {
    text = bytes;
  } else {
    try {
      text = new TextDecoder('utf-8', { fatal: true }).decode(bytes);
    } catch {
      return fail([fileIssue(file, 'the config file is not UTF-8 text')]);
    }
  }
  if (countItems(text, MAX_CONFIG_ITEMS) > MAX_CONFIG_ITEMS) {
    return fail([
      fileIssue(file, `the config file has more than ${MAX_CONFIG_ITEMS} lines and list items; put large response bodies in a bodyFile`, { line: 1, column: 1 }),
    ]);
  }
  const absolute = resolve(file);
  const dir = dirname(absolute);
  const revision = sha256(bytes);

  const lineCounter = new LineCounter();
  // YAML 1.2 core schema whatever a %YAML directive says (`yes` stays a string), duplicate keys are
  // errors, `<<` merge keys work (handy to share parts of endpoints), and logLevel 'error' keeps
  // errors and warnings in the document without ever writing to the process's stderr.
  const doc = parseDocument(text, { lineCounter, schema: 'core', merge: true, uniqueKeys: true, prettyErrors: false, logLevel: 'error' });
  const syntax = yamlIssues(doc, lineCounter, file, text);
  if (syntax.length > 0) return fail(syntax); // the data of a broken document would only add confusing issues
  const converted = toData(doc, lineCounter, file);
  if ('issue' in converted) return fail([converted.issue]);
  const { data } = converted;
  if (data === null || data === undefined) {
    return fail([fileIssue(file, 'the config file is empty; it needs at least an apiKey (`mockapi init` writes a starter)', { line: 1, column: 1 })]);
  }
  const issues = createIssueList(file, yamlLocator(doc, lineCounter, text));
  const result = validate(data, issues, dir, absolute, revision, () => data);
  const keys = surprisingKeys(doc, lineCounter, file);
  if (keys.length === 0) return result;
  return fail(result.ok ? keys : [...keys, ...result.issues]);
}

function guard(file: string, run: () => LoadResult): LoadResult {
  try {
    return run();
  } catch (err) {
    // Should not happen; a deeply nested document can still exhaust the stack inside the YAML parser.
    if (err instanceof RangeError) return fail([fileIssue(file, TOO_DEEP)]);
    return fail([fileIssue(file, `the config could not be read: ${(err as Error)?.message ?? String(err)}`)]);
  }
}

/**
 * Parses and validates config file contents. `file` labels the issues and locates body files
 * (relative to its folder); `revision` is the sha256 of exactly these bytes. Never throws: every
 * problem, YAML syntax included, is an issue with a line and column.
 */
export function parseConfig(bytes: Buffer | string, file: string): LoadResult {
  return guard(file, () => parseUnsafe(bytes, file));
}

/**
 * Validates a config given as an object (the programmatic API), as if it had been read from a
 * YAML file in `dir`. Issues are labelled `<config object>` and have line and column 0. The
 * revision is the sha256 of `JSON.stringify(value)`. Never throws.
 */
export function configFromObject(value: unknown, dir: string): LoadResult {
  return guard(OBJECT_LABEL, () => {
    let json: string | undefined;
    try {
      json = JSON.stringify(value);
    } catch {
      // a cycle or a BigInt: the rules below report where
    }
    const issues = createIssueList(OBJECT_LABEL, objectLocator);
    if (value === null || value === undefined) return fail([fileIssue(OBJECT_LABEL, 'the config is empty; it needs at least an apiKey')]);
    const absoluteDir = resolve(dir);
    // built from a JSON copy: the Config is frozen, the caller's object is left alone
    const result = validate(value, issues, absoluteDir, undefined, sha256(json ?? ''), () => (json === undefined ? value : JSON.parse(json)));
    if (!result.ok || json !== undefined) return result;
    return fail([fileIssue(OBJECT_LABEL, 'the config cannot be converted to JSON (it holds a cycle or a BigInt)')]);
  });
}

function fileProblem(err: unknown): string {
  const code = (err as NodeJS.ErrnoException)?.code;
  switch (code) {
    case 'ENOENT':
      return 'config file not found (`mockapi init` writes a starter)';
    case 'EACCES':
    case 'EPERM':
      return 'cannot read the config file: permission denied';
    case 'EISDIR':
      return 'this is a folder, not a config file';
    case 'ENOTDIR':
      return 'config file not found (a parent in its path is not a folder)';
    default:
      return `cannot read the config file: ${(err as Error)?.message ?? String(err)}`;
  }
}

/**
 * Reads and validates a config file. Problems with the file itself (missing, a folder, unreadable,
 * larger than {@link MAX_CONFIG_BYTES}) are issues at line 0, column 0, printed without a position.
 * Never throws.
 */
export async function loadConfig(file: string): Promise<LoadResult> {
  try {
    const info = await stat(file);
    if (info.isDirectory()) return fail([fileIssue(file, 'this is a folder, not a config file')]);
    if (!info.isFile()) return fail([fileIssue(file, 'is not a regular file')]);
    if (info.size > MAX_CONFIG_BYTES) {
      return fail([fileIssue(file, `the config file is ${info.size} bytes, more than the ${MAX_CONFIG_BYTES}-byte (5 MiB) limit`)]);
    }
    const bytes = await readFile(file);
    return parseConfig(bytes, file);
  } catch (err) {
    return fail([fileIssue(file, fileProblem(err))]);
  }
}
