import { createHash } from 'node:crypto';
import { stat } from 'node:fs/promises';
import { dirname, resolve } from 'node:path';
import { buildConfig } from './build.js';
import { checkedEndpoints, passesSchema } from './endpoint-reuse.js';
import { readYamlFast } from './fast-read.js';
import { memoOfRead, readYamlReusing, type ReadMemo } from './fast-read-reuse.js';
import { createIssueList, fileIssue, type IssueList } from './issues.js';
import { countItems, MAX_CONFIG_BYTES, MAX_CONFIG_ITEMS, OBJECT_LABEL, TOO_DEEP } from './limits.js';
import { objectLocator } from './locate.js';
import { readStable } from './read-stable.js';
import { checkRules } from './rules.js';
import { openApiIssues, type DescriptionCheck } from './rules-openapi.js';
import { reportSchemaErrors } from './schema-issues.js';
import { validateSchema } from './schema-validator.generated.js';
import type { Config, ConfigIssue, LoadResult } from './types.js';

export { MAX_ALIAS_COUNT, MAX_CONFIG_BYTES, MAX_CONFIG_ITEMS, MAX_EXPANDED_SIZE, OBJECT_LABEL } from './limits.js';

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

/**
 * Schema, then the rules the schema cannot express; a Config when nothing is wrong. `previous`:
 * the config served before a reload, whose endpoint data is not checked or built again where it did
 * not change. `read`: the data was read from a file here (never a caller's object, which may change).
 */
function validate(
  data: unknown,
  issues: IssueList,
  dir: string,
  file: string | undefined,
  revision: string,
  buildFrom: () => unknown,
  previous?: Config,
  read = false,
): LoadResult {
  if (!passesSchema(data, validateSchema, read)) reportSchemaErrors(validateSchema.errors ?? [], data, issues);
  const checked = checkedEndpoints(previous, dir);
  checkRules(data, { issues, dir, ...(checked === undefined ? {} : { checked }) });
  if (issues.issues.length > 0) return fail(issues.issues);
  return { ok: true, config: buildConfig(buildFrom(), dir, file, revision, previous) };
}

/** The config text of `bytes`, or why there is none to read. */
function decode(bytes: Buffer | string, file: string): { text: string } | { issue: ConfigIssue } {
  const size = typeof bytes === 'string' ? Buffer.byteLength(bytes) : bytes.length;
  if (size > MAX_CONFIG_BYTES)
    return {
      issue: fileIssue(file, `the config file is ${size} bytes, more than the ${MAX_CONFIG_BYTES}-byte (5 MiB) limit`),
    };
  let text: string;
  try {
    text = typeof bytes === 'string' ? bytes : new TextDecoder('utf-8', { fatal: true }).decode(bytes);
  } catch {
    return { issue: fileIssue(file, 'the config file is not UTF-8 text') };
  }
  if (countItems(text, MAX_CONFIG_ITEMS) > MAX_CONFIG_ITEMS) {
    const message = `the config file has more than ${MAX_CONFIG_ITEMS} lines and list items; put large response bodies in a bodyFile`;
    return { issue: fileIssue(file, message, { line: 1, column: 1 }) };
  }
  return { text };
}

const isEmpty = (data: unknown): boolean => data === null || data === undefined;

/** Each config read by the fast reader, with what the next read of its file may take over (fast-read-reuse.ts). */
const readMemos = new WeakMap<Config, ReadMemo>();

/**
 * The fast reader's data of `text`, taking the endpoints whose lines did not change from the read
 * of `previous`; and the memo for the read after it.
 */
function readFast(
  text: string,
  previous: Config | undefined,
): { data: unknown; memo: () => ReadMemo | undefined } | undefined {
  const memo = previous === undefined ? undefined : readMemos.get(previous);
  const reused = memo === undefined ? undefined : readYamlReusing(text, memo);
  if (reused !== undefined) return { data: reused.data, memo: () => reused.memo };
  const whole = readYamlFast(text, 3); // depth 3: the spans of the endpoints, for the memo
  return whole === undefined ? undefined : { data: whole.data, memo: () => memoOfRead(text, whole) };
}

/**
 * The fast reader first (no positions needed when nothing is wrong); when it declines, or the
 * config has problems, the positioned reader, loaded on first use, reads it again so that every
 * issue has its line and column.
 */
async function parseUnsafe(
  bytes: Buffer | string,
  file: string,
  previous: Config | undefined,
  check: DescriptionCheck,
): Promise<LoadResult> {
  const decoded = decode(bytes, file);
  if ('issue' in decoded) return fail([decoded.issue]);
  const { text } = decoded;
  const absolute = resolve(file);
  const dir = dirname(absolute);
  const revision = sha256(bytes);

  const fast = readFast(text, previous);
  if (fast !== undefined && !isEmpty(fast.data)) {
    const result = validate(
      fast.data,
      createIssueList(file, objectLocator),
      dir,
      absolute,
      revision,
      () => fast.data,
      previous,
      true,
    );
    // The OpenAPI description is read only once the rest is right; its problems need positions.
    if (
      result.ok &&
      (result.config.openapi === undefined || (await openApiIssues(fast.data, dir, check)).length === 0)
    ) {
      const memo = fast.memo();
      if (memo !== undefined) readMemos.set(result.config, memo);
      return result;
    }
  }

  const { readPositioned } = await import('./read-positioned.js');
  const read = readPositioned(text, file);
  if (!read.ok) return fail(read.issues);
  const { data, locator, keyIssues } = read;
  if (isEmpty(data)) {
    return fail([
      fileIssue(file, 'the config file is empty; it needs at least an apiKey (`mockapi init` writes a starter)', {
        line: 1,
        column: 1,
      }),
    ]);
  }
  const issues = createIssueList(file, locator);
  let result = validate(data, issues, dir, absolute, revision, () => data, previous);
  if (result.ok && result.config.openapi !== undefined) {
    const found = await openApiIssues(data, dir, check);
    for (const issue of found) issues.report(issue.path, issue.message);
    if (found.length > 0) result = fail(issues.issues);
  }
  if (keyIssues.length === 0) return result;
  return fail(result.ok ? keyIssues : [...keyIssues, ...result.issues]);
}

/** A thrown error as an issue. Should not happen; a deeply nested document can still exhaust the stack inside the YAML parser. */
function thrown(file: string, err: unknown): LoadResult {
  if (err instanceof RangeError) return fail([fileIssue(file, TOO_DEEP)]);
  return fail([fileIssue(file, `the config could not be read: ${(err as Error)?.message ?? String(err)}`)]);
}

/**
 * Parses and validates config file contents. `file` labels the issues and locates body files
 * (relative to its folder); `revision` is the sha256 of exactly these bytes. Never throws: every
 * problem, YAML syntax included, is an issue with a line and column. `previous`: the config served
 * before a reload, whose endpoints are reused where their data did not change (see buildConfig).
 * `description`: how much of an OpenAPI description (`openapi.spec`) is read to check it — all of
 * it (`now`, the default), or only its file (`later`, see DescriptionCheck).
 */
export function parseConfig(
  bytes: Buffer | string,
  file: string,
  previous?: Config,
  description: DescriptionCheck = 'now',
): Promise<LoadResult> {
  return parseUnsafe(bytes, file, previous, description).catch((err: unknown) => thrown(file, err));
}

/**
 * Validates a config given as an object (the programmatic API), as if it had been read from a
 * YAML file in `dir`. Issues are labelled `<config object>` and have line and column 0. The
 * revision is the sha256 of `JSON.stringify(value)`. Never throws.
 */
export function configFromObject(value: unknown, dir: string): LoadResult {
  try {
    let json: string | undefined;
    try {
      json = JSON.stringify(value);
    } catch {
      // a cycle or a BigInt: the rules below report where
    }
    const issues = createIssueList(OBJECT_LABEL, objectLocator);
    if (value === null || value === undefined)
      return fail([fileIssue(OBJECT_LABEL, 'the config is empty; it needs at least an apiKey')]);
    const absoluteDir = resolve(dir);
    // built from a JSON copy: the Config is frozen, the caller's object is left alone
    const result = validate(value, issues, absoluteDir, undefined, sha256(json ?? ''), () =>
      json === undefined ? value : JSON.parse(json),
    );
    if (!result.ok || json !== undefined) return result;
    return fail([fileIssue(OBJECT_LABEL, 'the config cannot be converted to JSON (it holds a cycle or a BigInt)')]);
  } catch (err) {
    return thrown(OBJECT_LABEL, err);
  }
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
 * The bytes of a config file, or why they cannot be read: missing, a folder, not a regular file
 * (a FIFO or a device is never read: that could block for ever), unreadable, larger than
 * {@link MAX_CONFIG_BYTES}. Those issues are at line 0, column 0, printed without a position.
 * Never throws.
 */
export async function readConfigFile(
  file: string,
): Promise<{ ok: true; bytes: Buffer } | Extract<LoadResult, { ok: false }>> {
  try {
    const info = await stat(file);
    if (info.isDirectory()) return { ok: false, issues: [fileIssue(file, 'this is a folder, not a config file')] };
    if (!info.isFile()) return { ok: false, issues: [fileIssue(file, 'is not a regular file')] };
    const tooLarge = (size: number) => ({
      ok: false as const,
      issues: [
        fileIssue(file, `the config file is ${size} bytes, more than the ${MAX_CONFIG_BYTES}-byte (5 MiB) limit`),
      ],
    });
    if (info.size > MAX_CONFIG_BYTES) return tooLarge(info.size);
    // As a finished save left it, not half-written (see readStable).
    const bytes = await readStable(file);
    return bytes.length > MAX_CONFIG_BYTES ? tooLarge(bytes.length) : { ok: true, bytes };
  } catch (err) {
    return { ok: false, issues: [fileIssue(file, fileProblem(err))] };
  }
}

/** Reads and validates a config file (see {@link readConfigFile} and {@link parseConfig}). Never throws. */
export async function loadConfig(file: string, description: DescriptionCheck = 'now'): Promise<LoadResult> {
  const read = await readConfigFile(file);
  return read.ok ? parseConfig(read.bytes, file, undefined, description) : read;
}
