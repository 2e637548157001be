/**
 * What the command definitions share: the {@link Action} a command hands the CLI, and the options
 * several commands take, made in one place so their words and parsing stay the same — the config
 * file, where `serve` and `record` listen and keep their state and log, and the admin token of the
 * commands that call a running server.
 */
import { Command, Option } from 'commander';
import { parsePort } from './option-values.js';
import { DEFAULT_CONFIG, type CommandIO } from './commands/io.js';

/** What a command's action resolves to: the process exit code. */
export type Action = (io: CommandIO) => Promise<number>;

/** Where a command's action goes: the CLI runs it once parsing is done. */
export type OnAction = (action: Action) => void;

/** `-c, --config <file>`. */
export const configOption = (): Option => new Option('-c, --config <file>', 'config file').default(DEFAULT_CONFIG);

/** `serve` and `record`: the config, where to listen, the usage state and the request log. */
export const serverOptions = (): Option[] => [
  configOption(),
  new Option('-p, --port <n>', 'port to listen on (0 = any free port; default: server.port, else 4010)').argParser(
    parsePort,
  ),
  new Option('--host <addr>', 'address to bind (default: server.host, else 127.0.0.1)'),
  new Option('--state <file>', 'where quota usage is kept (default: .mockapi/state.json beside the config)'),
  new Option('--no-state', 'keep quota usage in memory only'),
  new Option('--log <format>', 'request log format').choices(['pretty', 'json', 'off']).default('pretty'),
];

/** `--admin-token`, for the commands that call a running server. */
export const adminTokenOption = (): Option =>
  new Option(
    '--admin-token <token>',
    'X-Mockapi-Admin-Token for a server bound beyond loopback (default: $MOCKAPI_ADMIN_TOKEN)',
  );

/** `command` with `options` added. */
export const withOptions = (command: Command, options: Option[]): Command =>
  options.reduce((c, o) => c.addOption(o), command);
