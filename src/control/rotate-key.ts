import { createHash } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { resolve } from 'node:path';
import { cleanupTempFiles } from '../state/atomic-write.js';
import { formatIssue, parseConfig } from '../config/load.js';
import { DEFAULT_KEY_NAME, type Config, type ConfigIssue } from '../config/types.js';
import { replaceNamedKey } from '../config/replace-named-key.js';
import { generateApiKey, isUsableKey, keyPrefixOf } from '../config/keys.js';
import { replaceApiKey } from '../config/replace-api-key.js';
import { updateFile, type FileUpdateHooks, type TransformResult } from '../state/swap-file.js';
import { describeFsError } from '../describe-fs-error.js';
import { reportLines, waitForServers, type ConfirmedElsewhere } from './rotate-key-report.js';

export type { ConfirmedElsewhere };

export interface RotateKeyOptions {
  config: string;
  key?: string;
  /** Which key: a name of `keys:`, or `default` (the default) for `apiKey`. */
  name?: string;
}

export interface RotateKeyDeps {
  /** How long to wait for running servers to confirm, in total. Default 5000. */
  timeoutMs?: number;
  /** Time between two health polls of one server. Default 20. */
  pollIntervalMs?: number;
  /** Returns the revision a server at `url` serves, or undefined when it does not answer. */
  fetchRevision?: (url: string) => Promise<string | undefined>;
  /** Test seams at the critical points of the file update (see swap-file.ts). */
  hooks?: FileUpdateHooks;
  /**
   * Once the file is rotated and let go: tells servers that do not watch it to serve `key` (the
   * hosts of a fleet, through its store), and answers which of them confirmed.
   */
  confirmElsewhere?: (key: string) => Promise<ConfirmedElsewhere>;
}
/** Rounds of "someone saved over the rotated file: apply the key again" before giving up with exit 1. */
const MAX_ROUNDS = 10;

/** Where the rotation tells what happens: stderr for the CLI, a discarded or collected list for the admin API. */
export interface MessageSink {
  err(line: string): void;
}

/**
 * Key rotation, the one procedure behind `mockapi rotate-key`, `POST /__mockapi/rotate-key` and
 * `rotateKey()`: replaces `apiKey` in the config file, then waits until every running watching
 * server of that file serves a revision with the new key, so the old key is refused by the time it
 * resolves (and, with `deps.confirmElsewhere`, until the hosts of a fleet confirm through its store:
 * those of this file that do not watch it are then counted as confirmed, not warned about).
 * Resolves with the new key, or undefined when the key was not rotated (`io` says why).
 *
 * An edit saved by someone else meanwhile is never lost: the key is applied to the
 * newest bytes (swap-file.ts holds the mechanism). After the servers confirm, the file is checked
 * once more; when it was saved again without the new key, the key is applied again.
 *
 * Undefined (the file, with any edit, left as it is) when the file cannot be read, is not valid, or
 * the key cannot be replaced; the key once the file is rotated, even when a server did not confirm
 * (it is named in a warning).
 */
export async function rotateKeyFile(
  opts: RotateKeyOptions,
  io: MessageSink,
  deps: RotateKeyDeps = {},
): Promise<{ key: string } | undefined> {
  const shown = opts.config;
  const file = resolve(opts.config);
  let bytes: Buffer;
  try {
    bytes = await readFile(file);
  } catch (err) {
    io.err(`cannot read ${shown}: ${describeFsError(err)}`);
    return undefined;
  }
  if (opts.key !== undefined && !isUsableKey(opts.key)) {
    io.err('--key must be printable ASCII without spaces or ":", as apiKey requires');
    return undefined;
  }
  const target: KeyTarget = {
    name: opts.name ?? DEFAULT_KEY_NAME,
    label: opts.name === undefined || opts.name === DEFAULT_KEY_NAME ? 'apiKey' : `key ${opts.name}`,
  };
  const newKey = opts.key ?? generateApiKey(await currentPrefix(bytes, shown, target));
  const withKey = new KeyedRevisions(file, newKey, shown, target);
  let editedMeanwhile = false;

  for (let round = 0; ; round++) {
    let result;
    try {
      await cleanupTempFiles(file);
      result = await updateFile(file, (bytes) => applyKey(bytes, newKey, shown, target), deps.hooks);
    } catch (err) {
      io.err(`cannot write ${shown}: ${describeFsError(err)}`);
      return undefined;
    }
    if (!result.ok) {
      if ('failure' in result) for (const line of result.failure) io.err(line);
      else if ('missing' in result) io.err(`cannot read ${shown}: no such file`);
      else
        io.err(`${shown} kept changing while the key was being rotated; the key was not rotated, run rotate-key again`);
      return undefined;
    }
    const { update } = result;
    editedMeanwhile ||= result.concurrentEdits > 0 || (round > 0 && update.written);
    if (round === 0 && !update.written) {
      // Asking for the key the file already has: the wanted state holds, nothing to write or wait for.
      await update.release();
      io.err(`${target.label} in ${shown} already has this value; file left unchanged`);
      for (const line of (await deps.confirmElsewhere?.(newKey))?.lines ?? []) io.err(line);
      return { key: newKey };
    }
    withKey.add(update.bytes);
    const local = await waitForServers(file, {
      ...deps,
      carriesNewKey: (revision) => withKey.carries(revision),
      isStale: () => withKey.stale,
    });
    const changed = await update.settle();
    await update.release();
    if (!changed) {
      if (editedMeanwhile)
        io.err(
          `note: ${shown} was saved by someone else while the key was rotated; the new key was applied to the newest version`,
        );
      const elsewhere = await deps.confirmElsewhere?.(newKey);
      for (const line of reportLines(local, shown, target.label, elsewhere)) io.err(line);
      return { key: newKey };
    }
    if (round + 1 >= MAX_ROUNDS) {
      io.err(
        `${shown} kept changing while the key was being rotated; the newest version is left as it is, run rotate-key again`,
      );
      return undefined;
    }
  }
}

/** The new bytes for `bytes` with `newKey`, undefined when they already carry it, or the messages saying why not. */
/** Which key a rotation replaces: `name` (`default` is `apiKey`), and how messages call it. */
interface KeyTarget {
  name: string;
  label: string;
}

/**
 * The prefix the new key keeps: the current key's, up to its last `_` (a `sk_test_…` key stays
 * one). `mk_` when the file does not parse or has no such key: the update then says why.
 */
async function currentPrefix(bytes: Buffer, shown: string, target: KeyTarget): Promise<string | undefined> {
  const parsed = await parseConfig(bytes, shown);
  const key = parsed.ok ? keyNamed(parsed.config, target.name) : undefined;
  return key === undefined ? undefined : keyPrefixOf(key);
}

/** The text of the key named `name` in `config`; undefined when the config has no key of that name. */
function keyNamed(config: Config, name: string): string | undefined {
  return name === DEFAULT_KEY_NAME ? config.apiKey : config.keys?.find((k) => k.name === name)?.key;
}

/** The new bytes for `bytes` with `newKey`, undefined when they already carry it, or the messages saying why not. */
async function applyKey(
  bytes: Buffer,
  newKey: string,
  shown: string,
  target: KeyTarget,
): Promise<TransformResult<string[]>> {
  const current = await checkedConfig(bytes, shown, target);
  if (!current.ok) return current;
  if (current.key === newKey) return { ok: true, bytes: undefined };
  const source = bytes.toString('utf8');
  const replaced =
    target.name === DEFAULT_KEY_NAME ? replaceApiKey(source, newKey) : replaceNamedKey(source, target.name, newKey);
  if (!replaced.ok) return { ok: false, failure: [`cannot rotate the key in ${shown}: ${replaced.reason}`] };
  const newBytes = Buffer.from(replaced.text, 'utf8');
  const next = await parseConfig(newBytes, shown);
  if (!next.ok)
    return refuseInvalid(next.issues, `with the new key ${shown} would not be valid; the key was not rotated`);
  if (keyNamed(next.config, target.name) !== newKey)
    return { ok: false, failure: [`cannot rotate the key in ${shown}: the new key did not read back as written`] };
  return { ok: true, bytes: newBytes };
}

async function checkedConfig(
  bytes: Buffer,
  shown: string,
  target: KeyTarget,
): Promise<{ ok: true; key: string } | { ok: false; failure: string[] }> {
  const current = await parseConfig(bytes, shown);
  if (!current.ok) return refuseInvalid(current.issues, `${shown} is not a valid config; the key was not rotated`);
  // toString keeps a BOM, so offsets match the bytes; a round trip that differs means invalid UTF-8.
  if (!Buffer.from(bytes.toString('utf8'), 'utf8').equals(bytes))
    return { ok: false, failure: [`${shown} is not valid UTF-8; the key was not rotated`] };
  const key = keyNamed(current.config, target.name);
  if (key === undefined) {
    const names = [DEFAULT_KEY_NAME, ...(current.config.keys ?? []).map((k) => k.name)];
    return {
      ok: false,
      failure: [
        `${shown} has no key named ${JSON.stringify(target.name)} (its keys: ${names.join(', ')}); the key was not rotated`,
      ],
    };
  }
  return { ok: true, key };
}

function refuseInvalid(issues: ConfigIssue[], summary: string): { ok: false; failure: string[] } {
  return { ok: false, failure: [...issues.map(formatIssue), summary] };
}

const sha256 = (data: Buffer): string => createHash('sha256').update(data).digest('hex');

/**
 * Which revisions (sha256 of the bytes, as the health answer reports them) carry the new key: the
 * bytes rotate-key wrote, and whatever the file holds now when it carries the key (an editor may
 * have saved again right after the rotation). Reading the file also tells when it lost the key.
 */
class KeyedRevisions {
  private readonly good = new Set<string>();
  private readonly bad = new Set<string>();
  /** True once the file was seen without the new key: waiting is pointless, the key must be applied again. */
  stale = false;

  constructor(
    private readonly file: string,
    private readonly newKey: string,
    private readonly shown: string,
    private readonly target: KeyTarget,
  ) {}

  add(bytes: Buffer): void {
    this.good.add(sha256(bytes));
    this.stale = false;
  }

  async carries(revision: string): Promise<boolean> {
    if (this.good.has(revision)) return true;
    if (this.bad.has(revision)) return false;
    const bytes = await readFile(this.file).catch(() => undefined);
    if (bytes === undefined) return false;
    const current = sha256(bytes);
    if (!this.good.has(current) && !this.bad.has(current)) {
      const check = await checkedConfig(bytes, this.shown, this.target);
      (check.ok && check.key === this.newKey ? this.good : this.bad).add(current);
    }
    if (this.bad.has(current)) this.stale = true;
    return this.good.has(revision);
  }
}
