import type { Command } from 'commander';

/**
 * One or two examples per command, shown at the end of its `--help`. Each is a command line a user
 * can paste as it stands, with a comment saying what it does.
 */
export const HELP_EXAMPLES: Readonly<Record<string, readonly string[]>> = {
  serve: [
    'mockapi serve                      # serve ./mockapi.yaml on http://127.0.0.1:4010/mock/…',
    'mockapi serve -c api.yaml -p 0     # another config, on any free port (printed when ready)',
  ],
  'rotate-key': [
    'KEY=$(mockapi rotate-key)          # new key in the file and in every running server; printed alone',
    'mockapi rotate-key --key mk_test1  # set this key instead of a generated one',
  ],
  validate: [
    'mockapi validate                   # check ./mockapi.yaml; every problem as file:line:column',
    'mockapi validate -c api.yaml       # check another config',
  ],
  init: [
    'mockapi init                       # write ./mockapi.yaml with a fresh key',
    'mockapi init -c api.yaml --force   # write (or overwrite) api.yaml',
  ],
  import: [
    'mockapi import openapi.yaml        # add the description\'s operations to ./mockapi.yaml',
    'mockapi import openapi.yaml --check  # in CI: exit 1 when config and description differ',
  ],
  usage: [
    'mockapi usage                      # this month\'s count, the quota and the rate window',
    'mockapi usage --reset              # start the month\'s count again at 0',
  ],
  requests: [
    'mockapi requests                   # what the running server of ./mockapi.yaml received',
    'mockapi requests -f --json         # then every new request, one JSON line each',
  ],
};

/** Adds the examples of {@link HELP_EXAMPLES} after the help of each of `program`'s commands. */
export function addHelpExamples(program: Command): void {
  for (const command of program.commands) {
    const lines = HELP_EXAMPLES[command.name()];
    if (lines !== undefined) command.addHelpText('after', `\nExamples:\n${lines.map((line) => `  $ ${line}`).join('\n')}`);
  }
  program.addHelpText('after', '\nExamples:\n  $ mockapi init && mockapi serve   # a starter config with a fresh key, served on port 4010\n  $ mockapi serve --help            # the options and examples of one command');
}
