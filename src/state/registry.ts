import { mkdir, readdir, readFile, realpath, unlink } from 'node:fs/promises';
import { realpathSync, unlinkSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { cleanupTempFiles, isProcessAlive, writeFileAtomic } from './atomic-write.js';
import { ensureMockapiDir, MOCKAPI_DIR } from './mockapi-dir.js';

/** Folder under `.mockapi/` that holds one JSON file per running server. */
const SERVERS_DIR = 'servers';
const ENTRY_NAME = /^(\d+)-(\d+)\.json$/;
const TEMP_NAME = /^\.(\d+-\d+\.json)\.mockapi-tmp-/;

/** A running `mockapi serve` of a config file, as written in `.mockapi/servers/<pid>-<port>.json`. */
export interface ServerEntry {
  pid: number;
  /** Base URL the server answers on, e.g. `http://127.0.0.1:4010`. */
  url: string;
  /** Absolute path of the config file it serves. */
  configFile: string;
  /** ISO timestamp. */
  startedAt: string;
  /** False for servers started with `--no-watch`: they never pick up a new key by themselves. */
  watch: boolean;
}

export interface ServerInfo {
  url: string;
  /** Default: this process. */
  pid?: number;
  /** Whether the server reloads the config on change. Default true. */
  watch?: boolean;
}

/** Removes a registration. Calling it twice is harmless. `sync()` is for a process 'exit' handler. */
export interface Unregister {
  (): Promise<void>;
  sync(): void;
  /** The registry entry's path. */
  readonly path: string;
}

/**
 * Records a running server under `<config dir>/.mockapi/servers/<pid>-<port>.json` so that
 * `rotate-key` can find it and wait until it serves the new key. The entry is written atomically
 * (a reader never sees half a file). Several servers of one config (different ports) each get
 * their own entry. Returns the function that removes it; call it on shutdown.
 *
 * `<config dir>` is the folder of the file itself, after symlinks are resolved: a server started
 * through a link and a rotate-key run on the file (or through another link) then meet.
 */
export async function registerServer(configFile: string, info: ServerInfo): Promise<Unregister> {
  const absolute = resolve(configFile);
  const canonical = await canonicalPath(absolute);
  const pid = info.pid ?? process.pid;
  await ensureMockapiDir(dirname(canonical));
  const path = entryPath(canonical, pid, info.url);
  await mkdir(dirname(path), { recursive: true });
  const entry: ServerEntry = {
    pid,
    url: info.url,
    configFile: absolute,
    startedAt: new Date().toISOString(),
    watch: info.watch ?? true,
  };
  // No fsyncs (1–3 ms of every start): the entry describes a running process, so only atomicity matters, for readers.
  await writeFileAtomic(path, `${JSON.stringify(entry, null, 2)}\n`, { durable: false });

  const unregister = (async () => {
    await unlink(path).catch(ignoreMissing);
  }) as Unregister;
  unregister.sync = () => {
    try {
      unlinkSync(path);
    } catch (err) {
      ignoreMissing(err);
    }
  };
  Object.defineProperty(unregister, 'path', { value: path });
  return unregister;
}

/** Synchronous removal of a registration, for a process 'exit' handler where nothing async runs. */
export function unregisterSync(configFile: string, info: { url: string; pid?: number }): void {
  try {
    unlinkSync(entryPath(canonicalPathSync(resolve(configFile)), info.pid ?? process.pid, info.url));
  } catch (err) {
    ignoreMissing(err);
  }
}

/**
 * The servers registered for `configFile` whose process is alive. Entries of dead processes (a
 * server killed with SIGKILL never unregisters) are removed on the way, as are temporary files a
 * killed registration left behind. Unreadable entries of live processes are skipped.
 */
export async function listServers(configFile: string): Promise<ServerEntry[]> {
  const wanted = await canonicalPath(resolve(configFile));
  const dir = serversDir(wanted);
  const names = await readdir(dir).catch(() => [] as string[]);
  const servers: ServerEntry[] = [];
  for (const name of names) {
    const temp = TEMP_NAME.exec(name);
    if (temp) {
      await cleanupTempFiles(join(dir, temp[1] as string));
      continue;
    }
    const match = ENTRY_NAME.exec(name);
    if (!match) continue;
    const path = join(dir, name);
    if (!isProcessAlive(Number(match[1]))) {
      await unlink(path).catch(() => {});
      continue;
    }
    const entry = await readEntry(path);
    if (entry && (await canonicalPath(entry.configFile)) === wanted) servers.push(entry);
  }
  return servers.sort((a, b) => a.startedAt.localeCompare(b.startedAt) || a.url.localeCompare(b.url));
}

function serversDir(absoluteConfig: string): string {
  return join(dirname(absoluteConfig), MOCKAPI_DIR, SERVERS_DIR);
}

function entryPath(absoluteConfig: string, pid: number, url: string): string {
  return join(serversDir(absoluteConfig), `${pid}-${portOf(url)}.json`);
}

function portOf(url: string): number {
  const parsed = new URL(url);
  if (parsed.port) return Number(parsed.port);
  return parsed.protocol === 'https:' ? 443 : 80;
}

async function readEntry(path: string): Promise<ServerEntry | undefined> {
  try {
    const data = JSON.parse(await readFile(path, 'utf8')) as Partial<ServerEntry>;
    if (typeof data.pid !== 'number' || typeof data.url !== 'string' || typeof data.configFile !== 'string')
      return undefined;
    return {
      pid: data.pid,
      url: data.url,
      configFile: data.configFile,
      startedAt: typeof data.startedAt === 'string' ? data.startedAt : '',
      watch: data.watch !== false,
    };
  } catch {
    return undefined;
  }
}

/** Resolves symlinks so `./mockapi.yaml` and a symlinked path to it count as the same file. */
async function canonicalPath(path: string): Promise<string> {
  return realpath(path).catch(() => resolve(path));
}

function canonicalPathSync(path: string): string {
  try {
    return realpathSync(path);
  } catch {
    return path;
  }
}

function ignoreMissing(err: unknown): void {
  if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
}
