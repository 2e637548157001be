import type { Command } from 'commander';

/**
 * One or two examples per command, shown at the end of its `--help`. Each is a command line a user
 * can paste as it stands, with a comment saying what it does. They start with `npx mockapi-cli`, the
 * form that is safe before the package is installed (`mockapi` on the npm registry is another package).
 */
export const HELP_EXAMPLES: Readonly<Record<string, readonly string[]>> = {
  serve: [
    'npx mockapi-cli serve                        # serve ./mockapi.yaml on http://127.0.0.1:4010/mock/…',
    'npx mockapi-cli serve -c api.yaml -p 0       # another config, on any free port (printed when ready)',
  ],
  'rotate-key': [
    'KEY=$(npx mockapi-cli rotate-key)            # new key in the file and in every running server; printed alone',
    'npx mockapi-cli rotate-key --key mk_test1    # set this key instead of a generated one',
  ],
  validate: [
    'npx mockapi-cli validate                     # check ./mockapi.yaml; every problem as file:line:column',
    'npx mockapi-cli validate -c api.yaml         # check another config',
  ],
  init: [
    'npx mockapi-cli init                         # write ./mockapi.yaml with a fresh key',
    'npx mockapi-cli init -c api.yaml --force     # write (or overwrite) api.yaml',
  ],
  record: [
    'MOCKAPI_UPSTREAM_KEY=… npx mockapi-cli record  # proxy to upstream.url; Ctrl-C writes the endpoints',
    "npx mockapi-cli record --only 'GET /v1/*'     # record only these routes",
    'npx mockapi-cli record --from-har app.har     # record from a HAR file, without serving',
  ],
  verify: [
    'npx mockapi-cli verify                       # every example against upstream.url (key from the environment); exit 1 on drift',
    "npx mockapi-cli verify --json --only 'GET /v1/*'  # these routes only, the report as JSON",
  ],
  import: [
    "npx mockapi-cli import openapi.yaml          # add the description's operations to ./mockapi.yaml",
    'npx mockapi-cli import openapi.yaml --check  # in CI: exit 1 when config and description differ',
  ],
  usage: [
    "npx mockapi-cli usage                        # this month's count, the quota and the rate window",
    "npx mockapi-cli usage --reset                # start the month's count again at 0",
  ],
  requests: [
    'npx mockapi-cli requests                     # what the running server of ./mockapi.yaml received',
    'npx mockapi-cli requests -f --json           # then every new request, one JSON line each',
  ],
  webhooks: [
    'npx mockapi-cli webhooks list -f             # the deliveries of the running server, then each change',
    'npx mockapi-cli webhooks trigger charge.succeeded --to app  # send an event of webhooks.events now',
  ],
  resources: [
    "npx mockapi-cli resources list customers    # the objects of the running server's customers, one JSON line each",
    'npx mockapi-cli resources list              # each collection with its style, path and count',
  ],
  fleet: [
    'npx mockapi-cli fleet status                 # the hosts sharing fleet.store: address, version, config hash, last seen',
    'npx mockapi-cli fleet status --json          # the same as JSON',
  ],
  tls: [
    'npx mockapi-cli tls env                      # NODE_EXTRA_CA_CERTS=<the local CA>, for: export $(npx mockapi-cli tls env)',
    'npx mockapi-cli tls path                     # the path alone, for: curl --cacert "$(npx mockapi-cli tls path)" …',
  ],
};

/** Adds the examples of {@link HELP_EXAMPLES} after the help of each of `program`'s commands. */
export function addHelpExamples(program: Command): void {
  for (const command of program.commands) {
    const lines = HELP_EXAMPLES[command.name()];
    if (lines !== undefined)
      command.addHelpText('after', `\nExamples:\n${lines.map((line) => `  $ ${line}`).join('\n')}`);
  }
  program.addHelpText(
    'after',
    '\nExamples:\n  $ npx mockapi-cli init && npx mockapi-cli serve  # a starter config with a fresh key, served on port 4010\n  $ npx mockapi-cli serve --help                   # the options and examples of one command',
  );
}
