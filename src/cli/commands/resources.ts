import { connectMockServer } from '../../connect.js';
import { ControlError } from '../../control/control-error.js';
import { EXIT_FAILURE, EXIT_OK, type CommandIO } from './io.js';
import { newestServerUrl } from './running-server.js';

export interface ResourcesOptions {
  config: string;
  json?: boolean;
  adminToken?: string;
  /** `--where field=value`, repeatable: only objects whose fields have these values. */
  where?: string[];
}

function filterOf(where: readonly string[]): Record<string, string> | string {
  const filter: Record<string, string> = {};
  for (const item of where) {
    const eq = item.indexOf('=');
    if (eq <= 0) return `--where takes field=value, got ${JSON.stringify(item)}`;
    filter[item.slice(0, eq)] = item.slice(eq + 1);
  }
  return filter;
}

/**
 * `mockapi resources list [name]`: without a name, each collection of the running server with its
 * style, path and count; with one, its objects, one JSON object per line (oldest first), or all of
 * them as one JSON array with `--json`.
 */
export async function runResourcesList(
  name: string | undefined,
  opts: ResourcesOptions,
  io: CommandIO,
): Promise<number> {
  const filter = filterOf(opts.where ?? []);
  if (typeof filter === 'string') {
    io.err(filter);
    return EXIT_FAILURE;
  }
  const url = await newestServerUrl(opts.config, io);
  if (url === undefined) return EXIT_FAILURE;
  const token = opts.adminToken ?? process.env.MOCKAPI_ADMIN_TOKEN;
  const client = connectMockServer(url, token === undefined ? {} : { adminToken: token });
  try {
    if (name === undefined) {
      const collections = await client.resourceCollections();
      if (opts.json) io.out(JSON.stringify(collections));
      else if (collections.length === 0) io.err('the server has no resources (resources: in the config)');
      else
        for (const c of collections)
          io.out(`${c.name}  ${c.style}  ${c.path}  ${c.count} object${c.count === 1 ? '' : 's'}`);
      return EXIT_OK;
    }
    const objects = await client.resources[name]!.list(filter);
    if (opts.json) io.out(JSON.stringify(objects));
    else for (const object of objects) io.out(JSON.stringify(object));
    return EXIT_OK;
  } catch (err) {
    io.err(
      err instanceof ControlError
        ? `the server refused: ${err.message}`
        : `cannot reach the server: ${(err as Error).message}`,
    );
    return EXIT_FAILURE;
  }
}
