import { resolve } from 'node:path';
import { connectableUrl } from '../../state/confirm-servers.js';
import { listServers } from '../../state/registry.js';
import type { CommandIO } from './io.js';

/**
 * The URL of the newest running server of a config (found in the registry under
 * `.mockapi/servers/`), or undefined, told on stderr. `several`, when given, is said on stderr
 * when more than one runs (which one the command talks to).
 */
export async function newestServerUrl(
  config: string,
  io: CommandIO,
  several?: (count: number, url: string) => string,
): Promise<string | undefined> {
  return (await newestServer(config, io, several))?.url;
}

/** {@link newestServerUrl}, with the URL the server registered (`shown`, as messages name it). */
export async function newestServer(
  config: string,
  io: CommandIO,
  several?: (count: number, url: string) => string,
): Promise<RunningServer | undefined> {
  const found = await newestRunning(config);
  if (found === undefined) {
    io.err(`no running mockapi serve of ${config} (a server registers under .mockapi/servers/ while it runs)`);
    return undefined;
  }
  if (found.count > 1 && several !== undefined) io.err(several(found.count, found.shown));
  return found;
}

/** A running server as a command talks to it: `url` to connect to, `shown` as it registered (as messages name it). */
export interface RunningServer {
  url: string;
  shown: string;
}

/**
 * The newest running server of a config file, and how many run, or undefined when none does (or
 * the config has no file): what every command that reads a server's memory talks to, silently.
 */
export async function newestRunning(
  config: string | undefined,
): Promise<(RunningServer & { count: number }) | undefined> {
  const servers = config === undefined ? [] : await listServers(resolve(config)).catch(() => []);
  if (servers.length === 0) return undefined;
  const server = servers.reduce((a, b) => (b.startedAt > a.startedAt ? b : a));
  return { url: connectableUrl(server.url), shown: server.url, count: servers.length };
}
