import { formatIssue, loadConfig } from '../../config/load.js';
import { EXIT_FAILURE, EXIT_OK, type CommandIO } from './io.js';

export interface FleetStatusOptions {
  config: string;
  /** `--fleet <url>`: the fleet's Redis, over the config's `fleet.store`. */
  fleet?: string;
  json?: boolean;
}

/**
 * `mockapi fleet status`: the hosts registered in the fleet's Redis — address, machine, version,
 * config hash, last seen — and a warning on stderr when the live ones serve different configs.
 * Exit 1 when there is no fleet to look at (no `fleet.store`, or Redis cannot be reached).
 */
export async function runFleetStatus(opts: FleetStatusOptions, io: CommandIO): Promise<number> {
  const loaded = await loadConfig(opts.config);
  if (!loaded.ok) {
    for (const issue of loaded.issues) io.err(formatIssue(issue));
    return EXIT_FAILURE;
  }
  const { config } = loaded;
  const url = opts.fleet ?? (config.fleet?.url || undefined);
  if (url === undefined) {
    io.err(
      config.fleet === undefined
        ? `mockapi: ${opts.config} has no fleet.store; pass --fleet redis://host:port/db`
        : `mockapi: fleet.store reads ${config.fleet.missing.join(', ')}, not set in the environment; set it or pass --fleet redis://host:port/db`,
    );
    return EXIT_FAILURE;
  }
  const { readFleetStatus, formatFleetStatus } = await import('../../fleet/status.js');
  let status;
  try {
    status = await readFleetStatus(url, config.project);
  } catch (err) {
    io.err(`mockapi: ${(err as Error).message}`);
    return EXIT_FAILURE;
  }
  const { lines, warnings } = formatFleetStatus(status);
  if (opts.json === true) io.out(JSON.stringify(status));
  else for (const line of lines) io.out(line);
  for (const warning of warnings) io.err(warning);
  return EXIT_OK;
}
