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
): Promise<{ url: string; shown: string } | undefined> {
  const servers = await listServers(resolve(config)).catch(() => []);
  if (servers.length === 0) {
    io.err(`no running mockapi serve of ${config} (a server registers under .mockapi/servers/ while it runs)`);
    return undefined;
  }
  const server = servers.reduce((a, b) => (b.startedAt > a.startedAt ? b : a));
  if (servers.length > 1 && several !== undefined) io.err(several(servers.length, server.url));
  return { url: connectableUrl(server.url), shown: server.url };
}
