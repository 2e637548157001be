import { createHash } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { resolve } from 'node:path';
import { cleanupTempFiles, writeFileAtomic } from '../../state/atomic-write.js';
import { formatIssue, parseConfig } from '../../config/load.js';
import type { ConfigIssue } from '../../config/types.js';
import { generateApiKey, isUsableKey } from '../../config/keys.js';
import { listServers, type ServerEntry } from '../../state/registry.js';
import { replaceApiKey } from '../../config/replace-api-key.js';
import { EXIT_FAILURE, EXIT_OK, type CommandIO } from './io.js';

export interface RotateKeyOptions {
  config: string;
  key?: string;
}

export interface RotateKeyDeps {
  /** How long to wait for running servers to confirm, in total. Default 5000 (SPEC §5.5). */
  timeoutMs?: number;
  /** Time between two health polls of one server. Default 20. */
  pollIntervalMs?: number;
  /** Returns the revision a server at `url` serves, or undefined when it does not answer. */
  fetchRevision?: (url: string) => Promise<string | undefined>;
}

const DEFAULT_TIMEOUT_MS = 5000;
const DEFAULT_POLL_MS = 20;

/**
 * `mockapi rotate-key`: replaces `apiKey` in the config file atomically, then waits until every
 * running watching server of that file serves the new bytes, so the old key is refused by the
 * time the command exits. stdout gets only the new key; every message goes to stderr.
 *
 * Exit 1 (file untouched) when the file cannot be read, is not valid, or the key cannot be
 * replaced; exit 0 once the file is rotated, even when a server did not confirm (it is named in a
 * warning).
 */
export async function runRotateKey(opts: RotateKeyOptions, io: CommandIO, deps: RotateKeyDeps = {}): Promise<number> {
  const rotated = await rotateKeyFile(opts, io, deps);
  if (rotated === undefined) return EXIT_FAILURE;
  io.out(rotated.key);
  return EXIT_OK;
}

/**
 * The core of `mockapi rotate-key`, also behind `POST /__mockapi/rotate-key` and `rotateKey()`:
 * writes the new key and waits for the running servers, telling what happens on `io.err`.
 * Resolves with the new key, or undefined when the key was not rotated (the reason is on `io.err`).
 */
export async function rotateKeyFile(opts: RotateKeyOptions, io: Pick<CommandIO, 'err'>, deps: RotateKeyDeps = {}): Promise<{ key: string } | undefined> {
  const shown = opts.config;
  const file = resolve(opts.config);

  let bytes: Buffer;
  try {
    bytes = await readFile(file);
  } catch (err) {
    io.err(`cannot read ${shown}: ${describeFsError(err)}`);
    return undefined;
  }
  const current = await parseConfig(bytes, shown);
  if (!current.ok) return refuseInvalid(io, current.issues, `${shown} is not a valid config; the key was not rotated`);
  const source = bytes.toString('utf8'); // keeps a BOM, so offsets match the bytes
  if (!Buffer.from(source, 'utf8').equals(bytes)) {
    io.err(`${shown} is not valid UTF-8; the key was not rotated`);
    return undefined;
  }

  if (opts.key !== undefined && !isUsableKey(opts.key)) {
    io.err('--key must be printable ASCII without spaces or ":", as apiKey requires');
    return undefined;
  }
  const newKey = opts.key ?? generateApiKey();
  if (newKey === current.config.apiKey) {
    // Asking for the key the file already has: the wanted state holds, nothing to write or wait for.
    io.err(`apiKey in ${shown} already has this value; file left unchanged`);
    return { key: newKey };
  }

  const replaced = replaceApiKey(source, newKey);
  if (!replaced.ok) {
    io.err(`cannot rotate the key in ${shown}: ${replaced.reason}`);
    return undefined;
  }
  const newBytes = Buffer.from(replaced.text, 'utf8');
  const next = await parseConfig(newBytes, shown);
  if (!next.ok) return refuseInvalid(io, next.issues, `with the new key ${shown} would not be valid; the key was not rotated`);
  if (next.config.apiKey !== newKey) {
    io.err(`cannot rotate the key in ${shown}: the new key did not read back as written`);
    return undefined;
  }

  try {
    await cleanupTempFiles(file);
    // Narrow the window for losing an edit made while we were working; the rename itself is atomic.
    if (!(await readFile(file)).equals(bytes)) {
      io.err(`${shown} changed while the key was being rotated; nothing was written, run rotate-key again`);
      return undefined;
    }
    await writeFileAtomic(file, newBytes);
  } catch (err) {
    io.err(`cannot write ${shown}: ${describeFsError(err)}`);
    return undefined;
  }

  const revision = createHash('sha256').update(newBytes).digest('hex');
  await reportServers(file, shown, revision, io, deps);
  return { key: newKey };
}

function refuseInvalid(io: Pick<CommandIO, 'err'>, issues: ConfigIssue[], summary: string): undefined {
  for (const issue of issues) io.err(formatIssue(issue));
  io.err(summary);
  return undefined;
}

/** Waits for the running servers of `file` and tells on stderr which confirmed and which did not. */
async function reportServers(file: string, shown: string, revision: string, io: Pick<CommandIO, 'err'>, deps: RotateKeyDeps): Promise<void> {
  let servers: ServerEntry[];
  try {
    servers = await listServers(file);
  } catch (err) {
    io.err(`rotated apiKey in ${shown}`);
    io.err(`warning: could not list running servers (${describeFsError(err)}); a running mockapi serve may still accept the old key`);
    return;
  }
  const watching = servers.filter((s) => s.watch);
  const timeoutMs = deps.timeoutMs ?? DEFAULT_TIMEOUT_MS;
  const results = await waitForRevision(watching, revision, {
    timeoutMs,
    pollIntervalMs: deps.pollIntervalMs ?? DEFAULT_POLL_MS,
    fetchRevision: deps.fetchRevision ?? fetchHealthRevision,
  });
  const confirmed = results.filter((r) => r.confirmed).length;

  if (servers.length === 0) io.err(`rotated apiKey in ${shown}; no running servers`);
  else if (confirmed === servers.length) io.err(`rotated apiKey in ${shown}; ${plural(confirmed, 'running server')} confirmed`);
  else io.err(`rotated apiKey in ${shown}; ${confirmed} of ${plural(servers.length, 'running server')} confirmed`);

  for (const s of servers.filter((s) => !s.watch)) {
    io.err(`warning: server ${s.url} (pid ${s.pid}) runs with --no-watch and accepts the old key until it is restarted`);
  }
  for (const r of results.filter((r) => !r.confirmed)) {
    const why = r.sawRevision ? 'it still serves an older revision; is the file valid for it?' : 'it did not answer its health check';
    io.err(`warning: server ${r.server.url} (pid ${r.server.pid}) did not confirm the new key within ${seconds(timeoutMs)} (${why}); it may still accept the old key`);
  }
}

interface WaitResult {
  server: ServerEntry;
  confirmed: boolean;
  /** Whether the server ever answered with a revision (an older one, since it did not confirm). */
  sawRevision: boolean;
}

/** Polls every server concurrently until it reports `revision` or the shared deadline passes. */
async function waitForRevision(
  servers: ServerEntry[],
  revision: string,
  opts: { timeoutMs: number; pollIntervalMs: number; fetchRevision: (url: string) => Promise<string | undefined> },
): Promise<WaitResult[]> {
  const deadline = Date.now() + opts.timeoutMs;
  return Promise.all(
    servers.map(async (server) => {
      let sawRevision = false;
      for (;;) {
        const remaining = deadline - Date.now();
        if (remaining <= 0) return { server, confirmed: false, sawRevision };
        const served = await withDeadline(opts.fetchRevision(server.url).catch(() => undefined), remaining);
        if (served === revision) return { server, confirmed: true, sawRevision: true };
        if (served !== undefined) sawRevision = true;
        await sleep(Math.min(opts.pollIntervalMs, Math.max(0, deadline - Date.now())));
      }
    }),
  );
}

/** `GET <url>/__mockapi/health` → its `revision`, or undefined when the server does not answer. */
export async function fetchHealthRevision(url: string): Promise<string | undefined> {
  try {
    const res = await fetch(`${connectableUrl(url)}/__mockapi/health`, { signal: AbortSignal.timeout(1000) });
    if (!res.ok) {
      await res.body?.cancel();
      return undefined;
    }
    const body = (await res.json()) as { revision?: unknown };
    return typeof body.revision === 'string' ? body.revision : undefined;
  } catch {
    return undefined;
  }
}

/** A server bound to every interface is reached on loopback; the registry holds the bound address. */
export function connectableUrl(url: string): string {
  const parsed = new URL(url);
  if (parsed.hostname === '0.0.0.0') parsed.hostname = '127.0.0.1';
  if (parsed.hostname === '[::]') parsed.hostname = '[::1]';
  return parsed.toString().replace(/\/+$/, '');
}

function withDeadline<T>(promise: Promise<T>, ms: number): Promise<T | undefined> {
  return new Promise((done) => {
    const timer = setTimeout(() => done(undefined), ms);
    promise.then(
      (value) => {
        clearTimeout(timer);
        done(value);
      },
      () => {
        clearTimeout(timer);
        done(undefined);
      },
    );
  });
}

function sleep(ms: number): Promise<void> {
  return new Promise((done) => setTimeout(done, ms));
}

function plural(n: number, noun: string): string {
  return `${n} ${noun}${n === 1 ? '' : 's'}`;
}

function seconds(ms: number): string {
  return `${Number((ms / 1000).toFixed(2))}s`;
}

function describeFsError(err: unknown): string {
  const e = err as NodeJS.ErrnoException;
  switch (e.code) {
    case 'ENOENT':
      return 'no such file';
    case 'EACCES':
    case 'EPERM':
      return 'permission denied';
    case 'EISDIR':
      return 'it is a folder';
    default:
      return e.message ?? String(err);
  }
}
