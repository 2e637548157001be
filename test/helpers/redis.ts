import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/** A redis-server this test started (never a system instance), with nothing persisted. */
export interface RedisServer {
  /** `unix:///…/redis.sock` or `redis://127.0.0.1:<port>`. */
  url: string;
  /** Runs redis-cli against it and returns its output (trimmed). */
  cli(...args: string[]): string;
  /** SIGKILL: the store goes away mid-flight, as a crash would. */
  kill(): Promise<void>;
  /** SIGSTOP / SIGCONT: a Redis that hangs without closing its connections. */
  pause(): void;
  resume(): void;
  /** Starts it again at the same address, empty. */
  restart(): Promise<void>;
  /** Stops it and removes its folder. */
  stop(): Promise<void>;
}

/** True when `redis-server` is on the PATH (.ci/run installs it). */
export function hasRedisServer(): boolean {
  return spawnSync('redis-server', ['--version']).status === 0;
}

async function freePort(): Promise<number> {
  return new Promise((done, fail) => {
    const server = createServer();
    server.once('error', fail);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() => done(typeof address === 'object' && address !== null ? address.port : 0));
    });
  });
}

function launch(args: string[]): Promise<ChildProcess> {
  return new Promise((done, fail) => {
    const child = spawn('redis-server', args, { stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      fail(new Error(`redis-server did not start:\n${out}`));
    }, 10_000);
    const onData = (d: Buffer) => {
      out += d;
      if (/ready to accept connections/i.test(out)) {
        clearTimeout(timer);
        child.stdout!.off('data', onData);
        child.stdout!.resume();
        done(child);
      }
    };
    child.stdout!.on('data', onData);
    child.stderr!.on('data', (d) => (out += d));
    child.once('exit', (code) => {
      clearTimeout(timer);
      fail(new Error(`redis-server exited with ${code}:\n${out}`));
    });
  });
}

function exit(child: ChildProcess, signal: NodeJS.Signals): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((done) => {
    child.once('exit', () => done());
    child.kill(signal);
  });
}

/**
 * Starts a redis-server of its own: on a unix socket in a fresh temporary folder (no port to race
 * for), or on a free TCP port of 127.0.0.1 with `tcp: true`. `--save '' --appendonly no`: nothing
 * is written, so a restart starts empty.
 */
export async function startRedis(options: { tcp?: boolean } = {}): Promise<RedisServer> {
  const dir = await mkdtemp(join(tmpdir(), 'mockapi-redis-'));
  const socket = join(dir, 'redis.sock');
  const port = options.tcp ? await freePort() : 0;
  const args = ['--save', '', '--appendonly', 'no', '--dir', dir, '--bind', '127.0.0.1', '--port', String(port)];
  if (!options.tcp) args.push('--unixsocket', socket, '--unixsocketperm', '700');
  let child = await launch(args);
  const target = options.tcp ? ['-p', String(port)] : ['-s', socket];
  return {
    url: options.tcp ? `redis://127.0.0.1:${port}` : `unix://${socket}`,
    cli: (...cmd) => spawnSync('redis-cli', [...target, ...cmd], { encoding: 'utf8' }).stdout.trim(),
    kill: () => exit(child, 'SIGKILL'),
    pause: () => void child.kill('SIGSTOP'),
    resume: () => void child.kill('SIGCONT'),
    async restart() {
      await exit(child, 'SIGKILL');
      child = await launch(args);
    },
    async stop() {
      await exit(child, 'SIGKILL');
      await rm(dir, { recursive: true, force: true });
    },
  };
}
