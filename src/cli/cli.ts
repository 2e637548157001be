import { readFileSync } from 'node:fs';
import { Command, CommanderError, Option } from 'commander';
import { addHelpExamples } from './help-examples.js';
import {
  parseAdminToken,
  parseClock,
  parseConcurrency,
  parseDrain,
  parsePort,
  parseSeed,
  parseStoreUrl,
  parseTimeout,
  parseUpstreamUrl,
  parseWorkers,
} from './option-values.js';
import {
  createProcessIO,
  DEFAULT_CONFIG,
  EXIT_FAILURE,
  EXIT_INTERRUPTED,
  EXIT_OK,
  EXIT_USAGE,
  type CommandIO,
} from './commands/io.js';

function version(): string {
  const pkg = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string };
  return pkg.version;
}

/**
 * Resolves with the first SIGINT or SIGTERM: `serve` then stops gracefully. Any second one, of
 * either kind, means "now" and exits 130 (the server's 'exit' handler still removes its registry
 * entry). The handlers stay for the life of the process, so a stop that hangs can always be cut short.
 */
function untilSignal(): Promise<string> {
  return new Promise((done) => {
    let stopping = false;
    const onSignal = (signal: NodeJS.Signals) => {
      if (stopping) process.exit(EXIT_INTERRUPTED);
      stopping = true;
      done(signal);
    };
    process.on('SIGINT', onSignal);
    process.on('SIGTERM', onSignal);
  });
}

/** What a command's action resolves to: the process exit code. */
export type Action = (io: CommandIO) => Promise<number>;

/**
 * Builds the `mockapi` program. Pure: parsing runs no command; each action hands `onAction` a
 * thunk that lazy-imports the command's module, so `mockapi validate` never loads the server.
 */
export function createProgram(onAction: (action: Action) => void): Command {
  const program = new Command('mockapi')
    .description(
      'Run a local mock HTTP API from a YAML file: API-key auth, simulated failures, rate limit, monthly quota, key rotation.',
    )
    .version(version(), '-v, --version')
    .exitOverride()
    .showHelpAfterError('(run with --help for usage)');
  const configOption = () => new Option('-c, --config <file>', 'config file').default(DEFAULT_CONFIG);
  // Options several commands share, made in one place so their words and parsing stay the same.
  // `serve` and `record`: the config, where to listen, the usage state and the request log.
  const serverOptions = () => [
    configOption(),
    new Option('-p, --port <n>', 'port to listen on (0 = any free port; default: server.port, else 4010)').argParser(
      parsePort,
    ),
    new Option('--host <addr>', 'address to bind (default: server.host, else 127.0.0.1)'),
    new Option('--state <file>', 'where quota usage is kept (default: .mockapi/state.json beside the config)'),
    new Option('--no-state', 'keep quota usage in memory only'),
    new Option('--log <format>', 'request log format').choices(['pretty', 'json', 'off']).default('pretty'),
  ];
  const adminTokenOption = () =>
    new Option(
      '--admin-token <token>',
      'X-Mockapi-Admin-Token for a server bound beyond loopback (default: $MOCKAPI_ADMIN_TOKEN)',
    );
  const withOptions = (command: Command, options: Option[]): Command =>
    options.reduce((c, o) => c.addOption(o), command);

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

  program
    .command('rotate-key')
    .description('replace the API key in the config file atomically and print the new key')
    .addOption(configOption())
    .option('--key <value>', 'set this key instead of a generated one')
    .option('--name <name>', 'rotate the key of keys: with this name (default: apiKey, the key named default)')
    .action((opts) => onAction(async (io) => (await import('./commands/rotate-key.js')).runRotateKey(opts, io)));

  program
    .command('validate')
    .description('check a config file and print every problem (exit 0 when valid, 1 when not)')
    .addOption(configOption())
    .action((opts) => onAction(async (io) => (await import('./commands/validate.js')).runValidate(opts, io)));

  program
    .command('init')
    .description('write a starter mockapi.yaml with a freshly generated key')
    .addOption(configOption())
    .option('-f, --force', 'overwrite an existing file')
    .action((opts) => onAction(async (io) => (await import('./commands/init.js')).runInit(opts, io)));

  program
    .command('import')
    .description('write the operations of an OpenAPI 3.0/3.1 description into the config as endpoints')
    .argument('<spec>', 'the OpenAPI description (YAML or JSON)')
    .addOption(configOption())
    .option(
      '--check',
      'change nothing; exit 1 listing the differences when the config and the description have drifted apart',
    )
    .option(
      '--look-alike',
      "a new config takes the API's shape: server.basePath from the first server URL (endpoints keep the description's paths) and auth.accept from its security schemes",
    )
    .option(
      '--resources',
      'operations that make a collection (GET/POST <path>, GET/POST/PATCH/DELETE <path>/{id}) become resources: that remember what requests do',
    )
    .option(
      '--allow-refs-under <dir>',
      "let $refs read files under <dir> too (repeatable); by default they may read only files inside the description's folder",
      (dir: string, dirs: string[] = []) => [...dirs, dir],
    )
    .action((spec: string, opts) =>
      onAction(async (io) => (await import('./commands/import.js')).runImport(spec, opts, io)),
    );

  program
    .command('verify')
    .description(
      "send each endpoint's verify examples to the real API and to the mock, and report where their answers differ (exit 1 on drift or failure)",
    )
    .addOption(configOption())
    .option('--upstream <url>', 'the real API (default: upstream.url)', parseUpstreamUrl)
    .option(
      '--only <route>',
      "verify only these routes, such as 'GET /v1/*' (repeatable)",
      (route: string, routes: string[] = []) => [...routes, route],
    )
    .option('--json', 'print the report as JSON')
    .option(
      '--allow-unsafe',
      'also send the examples of POST, PUT, PATCH, DELETE and OPTIONS endpoints (they may change data on the real API)',
    )
    .option(
      '--update',
      "write the real API's answers into the recorded endpoints that drifted (redacted and scanned as a recording is)",
    )
    .option(
      '--timeout <duration>',
      'how long an answer of the real API may take (default: upstream.timeout, else 30s)',
      parseTimeout,
    )
    .option('--concurrency <n>', 'examples in flight at once (default 4)', parseConcurrency)
    .action((opts) => onAction(async (io) => (await import('./commands/verify.js')).runVerify(opts, io)));

  program
    .command('usage')
    .description("show this month's quota usage")
    .addOption(configOption())
    .option('--json', 'machine-readable output')
    .option('--reset', "zero this month's count")
    .option('--state <file>', 'usage state file (default: .mockapi/state.json beside the config)')
    .option('--no-state', 'state is kept in memory only (nothing to show)')
    .option(
      '--store <url>',
      'read (and reset) the month shared through this Redis (default: limits.store)',
      parseStoreUrl,
    )
    .option(
      '--session <id>',
      "this session's month, rate window and meters, from the running server (kept in its memory)",
    )
    .action((opts) => onAction(async (io) => (await import('./commands/usage.js')).runUsage(opts, io)));

  program
    .command('requests')
    .description('print the request journal of the running server of a config')
    .addOption(configOption())
    .option('-f, --follow', 'keep printing requests as they arrive')
    .option('--json', 'one JSON entry per line')
    .option('--violations', 'only requests that broke the OpenAPI description (openapi.spec), with each violation')
    .option(
      '--futile',
      'only futile retries: requests sent again after a spent budget (a month or total meter) refused them',
    )
    .option('--session <id>', 'the journal of this session of the server (X-Mockapi-Session), not the default one')
    .addOption(adminTokenOption())
    .action((opts) => onAction(async (io) => (await import('./commands/requests.js')).runRequests(opts, io)));

  const webhooks = program
    .command('webhooks')
    .description('the webhooks of the running server of a config: list deliveries, trigger an event');
  webhooks
    .command('list')
    .description('print the delivery log (event, target, status, attempts)')
    .addOption(configOption())
    .option('-f, --follow', 'keep printing deliveries as they change')
    .option('--json', 'one JSON delivery per line')
    .addOption(adminTokenOption())
    .action((opts) => onAction(async (io) => (await import('./commands/webhooks.js')).runWebhooksList(opts, io)));
  webhooks
    .command('trigger <event>')
    .description('send an event of webhooks.events to a target now')
    .addOption(configOption())
    .option('--to <target>', 'the target (default: the only one)')
    .option('--data <json>', "JSON laid over the event template's data")
    .option('--json', 'print the delivery as JSON')
    .addOption(adminTokenOption())
    .action((event: string, opts) =>
      onAction(async (io) => (await import('./commands/webhooks.js')).runWebhooksTrigger(event, opts, io)),
    );

  const resources = program
    .command('resources')
    .description('the resources of the running server of a config: what each collection holds');
  resources
    .command('list [name]')
    .description(
      "print a collection's objects, one JSON object per line (oldest first); without a name, each collection and its count",
    )
    .addOption(configOption())
    .option(
      '--where <field=value>',
      'only objects whose field has this value (repeatable)',
      (value: string, previous: string[] = []) => [...previous, value],
    )
    .option('--json', 'print them as one JSON array')
    .addOption(adminTokenOption())
    .action((name: string | undefined, opts) =>
      onAction(async (io) => (await import('./commands/resources.js')).runResourcesList(name, opts, io)),
    );

  const fleet = program
    .command('fleet')
    .description("the hosts of a fleet: every mockapi serve sharing the config's Redis (fleet.store)");
  fleet
    .command('status')
    .description(
      "list the hosts registered in the fleet's Redis (address, version, config hash, last seen); warn when their configs differ",
    )
    .addOption(configOption())
    .option('--fleet <url>', "the fleet's Redis (default: fleet.store)", parseStoreUrl)
    .option('--json', 'print the hosts as JSON')
    .action((opts) => onAction(async (io) => (await import('./commands/fleet.js')).runFleetStatus(opts, io)));

  program
    .command('tls')
    .description("print where this project's local CA certificate is, for clients to trust it (made if missing)")
    .argument('<what>', '`env`: NODE_EXTRA_CA_CERTS=<path>, for `export $(mockapi tls env)`; `path`: the path alone')
    .addOption(configOption())
    .action((what: string, opts) => onAction(async (io) => (await import('./commands/tls.js')).runTls(what, opts, io)));

  addHelpExamples(program);
  return program;
}

function isDebug(): boolean {
  return (process.env.DEBUG ?? '').split(',').some((name) => name.trim() === 'mockapi' || name.trim() === '*');
}

/** The CLI entry point (bin/mockapi.js). The only place that sets the process exit code. */
export async function run(argv: string[]): Promise<void> {
  // First: a reader that went away must never crash a command, least of all a running server.
  const processIO = createProcessIO();
  let action: Action | undefined;
  const program = createProgram((a) => {
    action = a;
  });
  try {
    await program.parseAsync(argv);
    if (action === undefined) {
      program.outputHelp({ error: true });
      process.exitCode = EXIT_USAGE;
      return;
    }
    process.exitCode = await action(processIO);
  } catch (err) {
    if (err instanceof CommanderError) {
      // --help and --version exit 0; everything else commander reports (including help shown
      // because no command was given) is wrong usage.
      process.exitCode = err.exitCode === 0 ? EXIT_OK : EXIT_USAGE;
      return;
    }
    processIO.err(`mockapi: ${err instanceof Error ? err.message : String(err)}`);
    if (isDebug() && err instanceof Error && err.stack) processIO.err(err.stack);
    process.exitCode = EXIT_FAILURE;
  }
}
