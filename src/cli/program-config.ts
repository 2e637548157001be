/**
 * The commands that work on a config file and need no running server: `rotate-key`, `validate`,
 * `init`, `import` (an OpenAPI description into endpoints), `verify` (the config against the real
 * API) and `tls` (where the local CA certificate is). Each action lazy-imports its command's module.
 */
import type { Command } from 'commander';
import { parseConcurrency, parseTimeout, parseUpstreamUrl } from './option-values.js';
import { configOption, type OnAction } from './program-options.js';

/** Adds `rotate-key`, `validate`, `init`, `import` and `verify`. */
export function addConfigCommands(program: Command, onAction: OnAction): void {
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

  addImport(program, onAction);
  addVerify(program, onAction);
}

function addImport(program: Command, onAction: OnAction): void {
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
}

function addVerify(program: Command, onAction: OnAction): void {
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
}

/** Adds `tls`. */
export function addTlsCommand(program: Command, onAction: OnAction): void {
  program
    .command('tls')
    .description("print where this project's local CA certificate is, for clients to trust it (made if missing)")
    .argument('<what>', '`env`: NODE_EXTRA_CA_CERTS=<path>, for `export $(mockapi tls env)`; `path`: the path alone')
    .addOption(configOption())
    .action((what: string, opts) => onAction(async (io) => (await import('./commands/tls.js')).runTls(what, opts, io)));
}
