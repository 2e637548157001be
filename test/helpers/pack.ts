import { spawn, type ChildProcess } from 'node:child_process';

export interface CommandResult {
  code: number | null;
  stdout: string;
  stderr: string;
}

/**
 * The environment a user's shell would give npm: the variables npm sets for a running script
 * (`npm test` runs this suite) describe *this* package — its name, its folder as the local prefix —
 * and must not leak into an npm run in another project. npm's own configuration (cache, registry,
 * CA file) stays.
 */
export function userEnv(): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...process.env, NO_COLOR: '1' };
  for (const name of Object.keys(env)) {
    if (/^npm_(package|lifecycle)_/i.test(name) || /^(npm_config_local_prefix|npm_command|INIT_CWD)$/i.test(name))
      delete env[name];
  }
  delete env.DEBUG;
  delete env.FORCE_COLOR;
  return env;
}

/** A long-running command whose output is collected, e.g. `npx mockapi serve`. */
export interface RunningCommand {
  child: ChildProcess;
  stdout(): string;
  stderr(): string;
  /** Resolves with the first match of `pattern` in stdout, once it appears. */
  waitForStdout(pattern: RegExp, timeoutMs: number): Promise<RegExpMatchArray>;
  /** Resolves with the exit code once the process has exited. */
  exited: Promise<number | null>;
  /**
   * Resolves once stdout and stderr are closed: every process that inherited them (a child of a
   * child too) has exited.
   */
  closed: Promise<void>;
}

/**
 * Starts `command args` in `cwd` without waiting for it to finish. `group: true` makes it the leader
 * of a process group of its own, so a signal can reach the group, as Ctrl-C in a terminal does.
 */
export function startCommand(
  command: string,
  args: string[],
  options: { cwd: string; group?: boolean; env?: Record<string, string> },
): RunningCommand {
  const child = spawn(command, args, {
    cwd: options.cwd,
    env: { ...userEnv(), ...options.env },
    stdio: ['ignore', 'pipe', 'pipe'],
    detached: options.group === true,
  });
  let out = '';
  let err = '';
  const waiters = new Set<() => void>();
  child.stdout!.on('data', (d) => {
    out += d;
    waiters.forEach((w) => w());
  });
  child.stderr!.on('data', (d) => (err += d));
  // A command that cannot start (not on PATH) emits `error` and maybe no `exit`: it ends as exit null.
  const exited = new Promise<number | null>((done) => {
    child.on('exit', (code) => done(code));
    child.on('error', (error) => {
      err += `${command}: ${error.message}\n`;
      done(null);
    });
  });
  exited.then(() => waiters.forEach((w) => w()));
  const closed = new Promise<void>((done) => {
    child.on('close', () => done());
    child.on('error', () => done());
  });
  return {
    child,
    stdout: () => out,
    stderr: () => err,
    exited,
    closed,
    waitForStdout: (pattern, timeoutMs) =>
      new Promise((done, fail) => {
        const check = (): void => {
          const match = out.match(pattern);
          if (match !== null) finish(() => done(match));
          else if (child.exitCode !== null || child.signalCode !== null)
            finish(() =>
              fail(new Error(`${command} exited before printing ${pattern}\nstdout: ${out}\nstderr: ${err}`)),
            );
        };
        const timer = setTimeout(
          () =>
            finish(() => fail(new Error(`no ${pattern} on stdout in ${timeoutMs} ms\nstdout: ${out}\nstderr: ${err}`))),
          timeoutMs,
        );
        const finish = (settle: () => void): void => {
          clearTimeout(timer);
          waiters.delete(check);
          settle();
        };
        waiters.add(check);
        check();
      }),
  };
}

/** Runs `command args` in `cwd` to completion (npm, npx, node), killing it after `timeoutMs`. */
export async function runCommand(
  command: string,
  args: string[],
  options: { cwd: string; timeoutMs: number; env?: Record<string, string> },
): Promise<CommandResult> {
  const run = startCommand(command, args, options);
  const timer = setTimeout(() => run.child.kill('SIGKILL'), options.timeoutMs);
  const code = await run.exited;
  await run.closed;
  clearTimeout(timer);
  if (run.child.signalCode === 'SIGKILL') {
    throw new Error(
      `${command} ${args.join(' ')} did not finish in ${options.timeoutMs} ms\nstdout: ${run.stdout()}\nstderr: ${run.stderr()}`,
    );
  }
  return { code, stdout: run.stdout(), stderr: run.stderr() };
}

/**
 * npm's complaints about the machine's own npm configuration (`npm warn Unknown user config
 * "nodedir"` from an npmrc, `npm warn config …` deprecations). They come from the machine, appear
 * on every npm command whatever is installed, and never concern the package.
 */
const NPM_CONFIG_WARNING = /^npm warn (Unknown \w+ config "[^"]*"|config )/i;

/** stderr lines that are warnings, other than npm's notes about the machine's npm configuration. */
export function warningsBesidesNpmConfig(stderr: string): string[] {
  return stderr.split('\n').filter((line) => /\bwarn/i.test(line) && !NPM_CONFIG_WARNING.test(line));
}

/** stderr lines that are not npm's notes about the machine's npm configuration. */
export function stderrBesidesNpmConfig(stderr: string): string[] {
  return stderr.split('\n').filter((line) => line !== '' && !NPM_CONFIG_WARNING.test(line));
}
