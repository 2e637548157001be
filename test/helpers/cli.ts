import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { mkdtemp, writeFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, afterEach, beforeAll, beforeEach } from 'vitest';

export const ROOT = resolve(fileURLToPath(new URL('../..', import.meta.url)));
export const BIN = join(ROOT, 'bin', 'mockapi.js');

/** Environment for spawned CLIs: no colours, no debug, nothing inherited that changes output. */
function childEnv(extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...process.env, NO_COLOR: '1', ...extra };
  delete env.DEBUG;
  delete env.FORCE_COLOR;
  return env;
}

export interface CliResult {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Runs `mockapi <args>` to completion. */
export function runCli(
  args: string[],
  options: { cwd?: string; env?: Record<string, string>; timeoutMs?: number } = {},
): Promise<CliResult> {
  return new Promise((done, fail) => {
    const child = spawn(process.execPath, [BIN, ...args], {
      cwd: options.cwd ?? ROOT,
      env: childEnv(options.env),
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => (stdout += d));
    child.stderr.on('data', (d) => (stderr += d));
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      fail(new Error(`mockapi ${args.join(' ')} did not finish in time\nstdout: ${stdout}\nstderr: ${stderr}`));
    }, options.timeoutMs ?? 20_000);
    child.on('error', fail);
    child.on('close', (code) => {
      clearTimeout(timer);
      done({ code, stdout, stderr });
    });
  });
}

/** A `mockapi serve` child process, started on port 0. */
export interface ServeProcess {
  /** The HTTPS URL the ready line names (`--https`, `server.https`). */
  httpsUrl?: string;
  url: string;
  /** `${url}/mock` */
  mock: string;
  child: ChildProcess;
  stdout(): string;
  stderr(): string;
  /** Waits until stderr (or stdout) matches. */
  waitForOutput(pattern: RegExp, stream?: 'stdout' | 'stderr', timeoutMs?: number): Promise<void>;
  /** Sends a signal (unless it has exited) and waits for the exit code and the end of its output. */
  stop(signal?: NodeJS.Signals): Promise<number | null>;
}

const running = new Set<ChildProcess>();

/** Starts `mockapi serve --port 0 …` (or another serving command, such as `record`) and resolves once the ready line names its URL. */
export function startServe(
  args: string[],
  options: { cwd?: string; env?: Record<string, string>; timeoutMs?: number; command?: string } = {},
): Promise<ServeProcess> {
  return new Promise((done, fail) => {
    const child = spawn(process.execPath, [BIN, options.command ?? 'serve', '--port', '0', ...args], {
      cwd: options.cwd ?? ROOT,
      env: childEnv(options.env),
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    running.add(child);
    let out = '';
    let err = '';
    const waiters = new Set<() => void>();
    const notify = () => waiters.forEach((w) => w());
    child.stdout!.on('data', (d) => {
      out += d;
      notify();
    });
    child.stderr!.on('data', (d) => {
      err += d;
      notify();
    });
    child.on('exit', () => {
      running.delete(child);
      notify();
    });
    // 'close', not 'exit': the output is complete only once the child's stdout and stderr closed
    // ('exit' may come first, and a test reading stderr after stop() would miss the last lines).
    const closed = new Promise<number | null>((r) => child.on('close', (code) => r(code)));
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      fail(new Error(`serve did not become ready\nstdout: ${out}\nstderr: ${err}`));
    }, options.timeoutMs ?? 30_000);

    const proc: ServeProcess = {
      url: '',
      mock: '',
      child,
      stdout: () => out,
      stderr: () => err,
      waitForOutput(pattern, stream = 'stderr', timeoutMs = 10_000) {
        return new Promise((ok, ko) => {
          const check = () => {
            if (pattern.test(stream === 'stderr' ? err : out)) {
              waiters.delete(check);
              clearTimeout(t);
              ok();
            }
          };
          const t = setTimeout(() => {
            waiters.delete(check);
            ko(new Error(`timed out waiting for ${pattern} on ${stream}\nstdout: ${out}\nstderr: ${err}`));
          }, timeoutMs);
          waiters.add(check);
          check();
        });
      },
      async stop(signal = 'SIGTERM') {
        if (child.exitCode === null && child.signalCode === null) child.kill(signal);
        return closed;
      },
    };
    const onReady = () => {
      const match = /mockapi listening on (http:\/\/\S+)(?: and (https:\/\/\S+))?/.exec(out);
      if (match) {
        waiters.delete(onReady);
        clearTimeout(timer);
        proc.url = match[1]!;
        if (match[2] !== undefined) proc.httpsUrl = match[2];
        proc.mock = `${proc.url}/mock`;
        done(proc);
      } else if (child.exitCode !== null) {
        waiters.delete(onReady);
        clearTimeout(timer);
        fail(new Error(`serve exited with ${child.exitCode}\nstdout: ${out}\nstderr: ${err}`));
      }
    };
    waiters.add(onReady);
  });
}

/** Kills every serve child still running (for afterAll). */
export async function stopAll(): Promise<void> {
  await Promise.all(
    [...running].map(
      (c) => new Promise<void>((r) => (c.exitCode !== null ? r() : (c.once('exit', () => r()), c.kill('SIGKILL')))),
    ),
  );
}

/** The folders {@link tempDir} made during the current test file. */
const made = new Set<string>();

/** A fresh temporary folder, removed when the test file is done (test/temp-dirs.ts). */
export async function tempDir(prefix = 'mockapi-test-'): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), prefix));
  made.add(dir);
  return dir;
}

/** {@link tempDir}, synchronously (where a test builds its fixture without awaiting). */
export function tempDirSync(prefix = 'mockapi-test-'): string {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  made.add(dir);
  return dir;
}

/** After a test file: stops the `mockapi serve` children it left, then removes every folder it made with {@link tempDir}. */
export async function removeTempDirs(): Promise<void> {
  await stopAll();
  const dirs = [...made];
  made.clear();
  await Promise.all(dirs.map((dir) => removeDir(dir)));
}

export async function removeDir(dir: string): Promise<void> {
  await rm(dir, { recursive: true, force: true });
}

/**
 * A temporary folder for a test file (or a fresh one per test with `each`): made before, removed
 * after, once every `mockapi serve` child has been stopped. Read the folder as `.path`.
 */
export function useTempDir(prefix: string, options: { each?: boolean } = {}): { readonly path: string } {
  const folder = { path: '' };
  const setUp = async () => {
    folder.path = await tempDir(prefix);
  };
  const tearDown = async () => {
    await stopAll();
    await removeDir(folder.path);
  };
  if (options.each) {
    beforeEach(setUp);
    afterEach(tearDown);
    afterAll(stopAll);
  } else {
    beforeAll(setUp);
    afterAll(tearDown);
  }
  return folder;
}

/** Writes `mockapi.yaml` (or `name`) into `dir` and returns its path. */
export async function writeConfig(dir: string, yaml: string, name = 'mockapi.yaml'): Promise<string> {
  const file = join(dir, name);
  await writeFile(file, yaml);
  return file;
}

/**
 * Polls `condition` until it returns a truthy value or `timeoutMs` passes. The default is for a
 * loaded CI machine (a reload, a process start): a condition that holds returns as soon as it does.
 */
export async function waitFor<T>(
  condition: () => T | undefined | Promise<T | undefined>,
  timeoutMs = 10_000,
  intervalMs = 10,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let lastError: unknown;
  for (;;) {
    try {
      const value = await condition();
      if (value) return value;
    } catch (err) {
      lastError = err;
    }
    if (Date.now() > deadline)
      throw new Error(`condition not met within ${timeoutMs} ms${lastError ? `: ${String(lastError)}` : ''}`);
    await new Promise((r) => setTimeout(r, intervalMs));
  }
}
