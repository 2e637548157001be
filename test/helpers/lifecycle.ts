import { spawn, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { readdir, readFile } from 'node:fs/promises';
import { createServer, connect, type Socket } from 'node:net';
import { join } from 'node:path';
import { request } from 'undici';
import { BIN, ROOT } from './cli.js';

/** How a spawned process ended. */
export interface Exit {
  code: number | null;
  signal: NodeJS.Signals | null;
}

/** A `mockapi serve` child whose output the test handles itself (unlike startServe, which waits for the ready line). */
export interface RawServe {
  child: ChildProcess;
  exit: Promise<Exit>;
  stdout(): string;
  stderr(): string;
}

/** Spawns `mockapi <args>` with piped stdio, without waiting for anything. */
export function spawnCli(args: string[], cwd = ROOT): RawServe {
  const env: NodeJS.ProcessEnv = { ...process.env, NO_COLOR: '1' };
  delete env.DEBUG;
  delete env.FORCE_COLOR;
  const child = spawn(process.execPath, [BIN, ...args], { cwd, env, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  let err = '';
  child.stdout!.on('data', (d) => (out += d));
  child.stderr!.on('data', (d) => (err += d));
  // Ignore errors on our ends: a test may destroy them to play a reader that went away.
  child.stdout!.on('error', () => {});
  child.stderr!.on('error', () => {});
  const exit = new Promise<Exit>((done) => child.once('exit', (code, signal) => done({ code, signal })));
  return { child, exit, stdout: () => out, stderr: () => err };
}

/** Resolves to how the process ended, or rejects when it is still running after `ms` (and kills it). */
export async function exitWithin(serve: RawServe, ms: number): Promise<Exit> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, fail) => {
    timer = setTimeout(() => {
      serve.child.kill('SIGKILL');
      fail(new Error(`still running ${ms} ms later\nstdout: ${serve.stdout()}\nstderr: ${serve.stderr()}`));
    }, ms);
  });
  try {
    return await Promise.race([serve.exit, late]);
  } finally {
    clearTimeout(timer);
  }
}

/**
 * A port that was free a moment ago (for tests that must know the port before the server prints it).
 * Picked below the kernel's ephemeral range: between this probe and the server's own bind, the
 * kernel hands ports of that range to every `listen(0)` and outgoing connection on the machine (a
 * parallel test's thousands of requests), and one of them could take this port; below the range
 * only an explicit bind to the same random port could.
 */
export async function freePort(): Promise<number> {
  const low = Math.min(ephemeralLow(), 32_768);
  for (let attempt = 0; attempt < 50; attempt++) {
    const port = 10_000 + Math.floor(Math.random() * (low - 10_000));
    if (await bindable(port)) return port;
  }
  throw new Error(`no free port found below ${low}`);
}

/** The first port of the kernel's ephemeral range (Linux); 32768 where it cannot be read. */
function ephemeralLow(): number {
  try {
    const low = Number(readFileSync('/proc/sys/net/ipv4/ip_local_port_range', 'utf8').trim().split(/\s+/)[0]);
    return Number.isInteger(low) && low > 11_000 ? low : 32_768;
  } catch {
    return 32_768;
  }
}

function bindable(port: number): Promise<boolean> {
  return new Promise((done) => {
    const probe = createServer();
    probe.once('error', () => done(false));
    probe.listen(port, '127.0.0.1', () => probe.close(() => done(true)));
  });
}

/** One GET; resolves to the status, or undefined when the connection failed (not listening yet, or gone). */
export async function statusOf(url: string, headers: Record<string, string> = {}): Promise<number | undefined> {
  try {
    const res = await request(url, { headers, reset: true });
    await res.body.dump();
    return res.statusCode;
  } catch {
    return undefined;
  }
}

/**
 * A connection to `port` as soon as something listens there: a refused connect is tried again a
 * millisecond later. A server holds the requests that reach it while it starts and answers them
 * when it opens (its gate opens after its listen, once it is registered and watching), so a
 * connection made within a millisecond of the listen gets the server's first answer as one made
 * at once would: trying at every turn of the loop instead cost this process a core for the whole
 * start (~17 s of CPU for lifecycle.test.ts's rounds), taken from the server starting beside it.
 */
function connectWhenListening(port: number, serve: RawServe, deadline: number): Promise<Socket | undefined> {
  return new Promise((done) => {
    const attempt = (): void => {
      if (serve.child.exitCode !== null || serve.child.signalCode !== null || Date.now() > deadline)
        return done(undefined);
      const socket = connect(port, '127.0.0.1');
      socket.once('error', () => {
        socket.destroy();
        setTimeout(attempt, 1);
      });
      socket.once('connect', () => {
        socket.removeAllListeners('error');
        done(socket);
      });
    };
    attempt();
  });
}

/** One GET on a connected socket (the server closes it after its answer: `Connection: close`; a client that half-closed would have its request aborted by node:http): the answer's status, undefined when none came. */
function statusOn(socket: Socket, path: string, headers: Record<string, string>): Promise<number | undefined> {
  return new Promise((done) => {
    let head = '';
    socket.setEncoding('latin1');
    socket.on('data', (chunk: string) => {
      if (head.length < 64) head += chunk;
    });
    socket.once('error', () => done(undefined));
    socket.once('close', () => {
      const status = /^HTTP\/1\.1 (\d{3}) /.exec(head)?.[1];
      done(status === undefined ? undefined : Number(status));
    });
    const lines = Object.entries(headers).map(([name, value]) => `${name}: ${value}\r\n`);
    socket.write(`GET ${path} HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n${lines.join('')}\r\n`);
  });
}

/**
 * Asks `url` as soon as the server listens, and again at once until an answer is a 200 (the
 * server's first 200 to this client); gives up when the process exits.
 */
export async function firstOk(
  url: string,
  serve: RawServe,
  timeoutMs = 15_000,
  headers: Record<string, string> = {},
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  const { port, pathname, search } = new URL(url);
  for (;;) {
    const socket = await connectWhenListening(Number(port), serve, deadline);
    if (socket === undefined) break;
    if ((await statusOn(socket, pathname + search, headers)) === 200) return;
    await new Promise((r) => setImmediate(r));
  }
  throw new Error(`no 200 from ${url}\nstdout: ${serve.stdout()}\nstderr: ${serve.stderr()}`);
}

/** The count in a state file, or undefined when there is none. */
export async function stateCount(file: string): Promise<number | undefined> {
  const text = await readFile(file, 'utf8').catch(() => undefined);
  return text === undefined ? undefined : (JSON.parse(text) as { usage: { requests: number } }).usage.requests;
}

/** Registry entries (`.mockapi/servers/*.json`) beside a config in `dir`. */
export async function registryEntries(dir: string): Promise<string[]> {
  return (await readdir(join(dir, '.mockapi', 'servers')).catch(() => [] as string[])).filter((n) =>
    n.endsWith('.json'),
  );
}

/** A raw TCP connection to `url`'s port, with everything it receives collected. */
export async function rawSocket(url: string): Promise<{ socket: Socket; received(): string }> {
  const socket = connect(Number(new URL(url).port), '127.0.0.1');
  socket.on('error', () => {});
  let received = '';
  socket.on('data', (d) => (received += d));
  await new Promise((r) => socket.once('connect', r));
  return { socket, received: () => received };
}
