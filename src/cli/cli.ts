/**
 * The `mockapi` program: {@link createProgram} builds it (pure: the commands are defined in
 * program-server.ts, program-config.ts and program-running.ts), {@link run} parses the command line,
 * runs the chosen action and sets the exit code. The only module that touches the process.
 */
import { readFileSync } from 'node:fs';
import { Command, CommanderError } from 'commander';
import { addHelpExamples } from './help-examples.js';
import { addConfigCommands, addTlsCommand } from './program-config.js';
import { addRunningCommands } from './program-running.js';
import { addServerCommands } from './program-server.js';
import type { Action } from './program-options.js';
import { createProcessIO, EXIT_FAILURE, EXIT_INTERRUPTED, EXIT_OK, EXIT_USAGE } from './commands/io.js';

export type { Action } from './program-options.js';

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
  addServerCommands(program, onAction, untilSignal);
  addConfigCommands(program, onAction);
  addRunningCommands(program, onAction);
  addTlsCommand(program, onAction);
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
