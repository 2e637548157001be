/**
 * The commands that run the mock server: `serve` (hot-reloading the config) and `record` (serving
 * while it writes what the real API answered into the config). Each action lazy-imports its
 * command's module; `untilSignal` is how they learn to stop.
 */
import { Command, Option } from 'commander';
import {
  parseAdminToken,
  parseClock,
  parseDrain,
  parsePort,
  parseSeed,
  parseStoreUrl,
  parseUpstreamUrl,
  parseWorkers,
} from './option-values.js';
import { serverOptions, withOptions, type OnAction } from './program-options.js';

/** Adds `serve` and `record`; `untilSignal` resolves when the process is asked to stop. */
export function addServerCommands(program: Command, onAction: OnAction, untilSignal: () => Promise<string>): void {
  addServe(program, onAction, untilSignal);
  addRecord(program, onAction, untilSignal);
}

function addServe(program: Command, onAction: OnAction, untilSignal: () => Promise<string>): void {
  withOptions(
    program.command('serve').description('start the mock server and hot-reload the config on change'),
    serverOptions(),
  )
    .option('--no-watch', 'do not watch the config (no reload) or the usage state file')
    .option('--seed <n>', 'seed for simulated failures, to make them reproducible', parseSeed)
    .option(
      '--store <url>',
      'Redis URL that shares the rate window and the month across servers (default: limits.store)',
      parseStoreUrl,
    )
    .option(
      '--workers <n>',
      'run n processes on one port (node:cluster); with limits configured, needs a store',
      parseWorkers,
    )
    .option(
      '--fleet <url>',
      'be one host of a fleet sharing this Redis: stubs, resources, journal, clock, limits, sessions (default: fleet.store)',
      parseStoreUrl,
    )
    .option('--clock <time>', 'start a virtual clock at this ISO time (moved with POST /__mockapi/clock)', parseClock)
    .option(
      '--admin-token <token>',
      'require this X-Mockapi-Admin-Token on admin calls (made and printed when bound beyond loopback)',
      parseAdminToken,
    )
    .option(
      '--drain-webhooks <duration>',
      'at stop, wait up to this long (e.g. 10s) for pending webhook deliveries',
      parseDrain,
    )
    .option(
      '--upstream <url>',
      'send requests no endpoint answers to this real API (partial mocking; nothing is written)',
      parseUpstreamUrl,
    )
    .option('--fail-on-violations', 'exit 1 at stop when any request broke the OpenAPI description (openapi.spec)')
    .option(
      '--https [port]',
      'also serve HTTPS on this port (0 = any free port; default: server.https.port, else 4443)',
      parsePort,
    )
    .option('--tls-cert <file>', 'HTTPS certificate file (PEM) instead of one from the local CA; needs --tls-key')
    .option('--tls-key <file>', 'private key file (PEM) of --tls-cert')
    .action((opts) => onAction(async (io) => (await import('./commands/serve.js')).runServe(opts, io, untilSignal)));
}

function addRecord(program: Command, onAction: OnAction, untilSignal: () => Promise<string>): void {
  withOptions(
    program
      .command('record')
      .description('serve, send requests upstream and write what they answered into the config when stopped'),
    serverOptions(),
  )
    .option('--upstream <url>', 'the real API (default: upstream.url)', parseUpstreamUrl)
    .addOption(
      new Option('--mode <mode>', 'new: only requests no endpoint answers go upstream; all: every request does')
        .choices(['new', 'all'])
        .default('new'),
    )
    .option(
      '--only <route>',
      "record only these routes, such as 'GET /v1/*' (repeatable)",
      (route: string, routes: string[] = []) => [...routes, route],
    )
    .option('--dry-run', 'print what would be written and change nothing')
    .option('--openapi <spec>', 'take path templates from this OpenAPI description')
    .option('--from-har <file>', 'record from a HAR file instead of serving')
    .option(
      '--workers <n>',
      'run n processes on one port (node:cluster); the primary gathers what each recorded and writes once',
      parseWorkers,
    )
    .option(
      '--store <url>',
      'Redis URL that shares the rate window and the month across servers (default: limits.store; needed by --workers with limits)',
      parseStoreUrl,
    )
    .option('--no-watch', 'do not watch the config (no reload)')
    .option('--seed <n>', 'seed for simulated failures, to make them reproducible', parseSeed)
    .action((opts) => onAction(async (io) => (await import('./commands/record.js')).runRecord(opts, io, untilSignal)));
}
