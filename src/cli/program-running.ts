/**
 * The commands that read a running server or its state: `usage` (the month's quota), `requests`
 * (the journal), `webhooks list|trigger`, `resources list` and `fleet status` (the hosts sharing a
 * Redis). Each action lazy-imports its command's module.
 */
import type { Command } from 'commander';
import { parseStoreUrl } from './option-values.js';
import { adminTokenOption, configOption, type OnAction } from './program-options.js';

/** Adds `usage`, `requests`, `webhooks`, `resources` and `fleet`. */
export function addRunningCommands(program: Command, onAction: OnAction): void {
  addUsage(program, onAction);
  addRequests(program, onAction);
  addWebhooks(program, onAction);
  addResources(program, onAction);
  addFleet(program, onAction);
}

function addUsage(program: Command, onAction: OnAction): void {
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
}

function addRequests(program: Command, onAction: OnAction): void {
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
}

function addWebhooks(program: Command, onAction: OnAction): void {
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
}

function addResources(program: Command, onAction: OnAction): void {
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
}

function addFleet(program: Command, onAction: OnAction): void {
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
}
