// The processes a bench run starts (servers, redis-server, node scripts) and what it reads of them
// (their ready line, RSS); every child is killed at the end (bench/run.js).
import { spawn, spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { get, request } from 'node:http';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { DIST, STUB_COUNT, SERVER_CORE } from './options.js';

export const children = new Set();

export function pinned(args) {
  return SERVER_CORE === undefined
    ? [process.execPath, args]
    : ['taskset', ['-c', SERVER_CORE, process.execPath, ...args]];
}

/**
 * Starts a server (bare or the mockapi CLI) and resolves with its URL once it printed its ready
 * line. `stdout`: 'pipe' (read the line) or a file descriptor (then `port` must be given and the
 * server is polled until it answers).
 */
export async function startServer(
  name,
  args,
  { env = {}, stdout = 'pipe', port, readyTimeoutMs = 30_000, command } = {},
) {
  // `command`: run `command args` as given (the workers figure pins its servers itself).
  const [cmd, argv] = command === undefined ? pinned(args) : [command, args];
  const child = spawn(cmd, argv, { stdio: ['ignore', stdout, 'pipe'], env: { ...process.env, ...env } });
  children.add(child);
  let stderr = '';
  child.stderr.on('data', (chunk) => (stderr += chunk));
  const exited = new Promise((resolve) => child.once('exit', resolve));
  child.once('exit', () => children.delete(child));
  const ready =
    stdout === 'pipe'
      ? waitForLine(child, readyTimeoutMs)
      : pollUntilUp(`http://127.0.0.1:${port}`, readyTimeoutMs).then(() => `http://127.0.0.1:${port}`);
  const url = await Promise.race([
    ready,
    exited.then((code) => Promise.reject(new Error(`${name} exited (${code}): ${stderr}`))),
  ]);
  return {
    name,
    url,
    pid: child.pid,
    async stop() {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), 5000);
      await exited;
      clearTimeout(timer);
    },
  };
}

export function waitForLine(child, timeoutMs) {
  return new Promise((resolve, reject) => {
    let out = '';
    const timer = setTimeout(() => reject(new Error(`no ready line within ${timeoutMs} ms: ${out}`)), timeoutMs);
    child.stdout.on('data', function onData(chunk) {
      out += chunk;
      const match = /listening on (http:\/\/[^\s]+)/.exec(out);
      if (match === null) return;
      clearTimeout(timer);
      child.stdout.removeListener('data', onData);
      child.stdout.resume(); // keep draining whatever else it prints
      resolve(match[1]);
    });
  });
}

export async function pollUntilUp(url, timeoutMs) {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    try {
      return await fetchText(`${url}/__mockapi/health`);
    } catch (err) {
      if (Date.now() > deadline) throw err;
      await sleep(10);
    }
  }
}

/** GET without keep-alive; resolves with {status, body, headers}. */
export function fetchText(url, headers = {}) {
  return new Promise((resolve, reject) => {
    const req = get(url, { headers, agent: false }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (chunk) => (body += chunk));
      res.on('end', () => resolve({ status: res.statusCode, body, headers: res.headers }));
    });
    req.setTimeout(5000, () => req.destroy(new Error(`timeout: ${url}`)));
    req.on('error', reject);
  });
}

/** Adds STUB_COUNT run-time stubs through the admin API (static and parameter routes, none the loaded path's). */
export async function addStubs(url) {
  for (let i = 0; i < STUB_COUNT; i++) {
    const path = i % 2 === 0 ? `/stubbed${i}/items` : `/stubbed${i}/items/:id`;
    const body = JSON.stringify({ endpoint: { method: 'GET', path, response: { body: { stub: i } } } });
    const status = await new Promise((resolve, reject) => {
      const req = request(
        `${url}/__mockapi/stubs`,
        {
          method: 'POST',
          agent: false,
          headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) },
        },
        (res) => {
          res.resume();
          res.on('end', () => resolve(res.statusCode));
        },
      );
      req.on('error', reject);
      req.end(body);
    });
    if (status !== 201) throw new Error(`adding stub ${i}: ${status}`);
  }
}

export function freePort() {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address();
      server.close(() => resolve(port));
    });
  });
}

/** Resident set size of a process in MB, from /proc (undefined where there is no /proc). */
export function rssMb(pid) {
  try {
    const match = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return match === null ? undefined : Number(match[1]) / 1024;
  } catch {
    return undefined;
  }
}

/** Samples a process's RSS every `everyMs` until stopped; returns the samples (MB). */
export function sampleRss(pid, everyMs = 1000) {
  const samples = [];
  const take = () => {
    const mb = rssMb(pid);
    if (mb !== undefined) samples.push(mb);
  };
  take();
  const timer = setInterval(take, everyMs);
  return () => {
    clearInterval(timer);
    take();
    return samples;
  };
}

export function runNode(args, timeoutMs = 60_000) {
  const [cmd, argv] = pinned(args);
  const result = spawnSync(cmd, argv, {
    encoding: 'utf8',
    timeout: timeoutMs,
    env: { ...process.env, MOCKAPI_BENCH_DIST: DIST },
  });
  if (result.status !== 0)
    throw new Error(`${args.join(' ')} failed (${result.status ?? result.signal}): ${result.stderr}`);
  return result.stdout;
}

export const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));
export const median = (values) => {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
};

/** A redis-server of the bench's own on a unix socket in `dir`, on the server core, nothing persisted. */
export async function startRedis(dir) {
  const socket = join(dir, 'redis.sock');
  const [cmd, argv] =
    SERVER_CORE === undefined ? ['redis-server', []] : ['taskset', ['-c', SERVER_CORE, 'redis-server']];
  const child = spawn(
    cmd,
    [...argv, '--port', '0', '--unixsocket', socket, '--save', '', '--appendonly', 'no', '--dir', dir],
    { stdio: ['ignore', 'pipe', 'pipe'] },
  );
  children.add(child);
  await new Promise((done, failed) => {
    let out = '';
    child.stdout.on('data', (d) => {
      out += d;
      if (/ready to accept connections/i.test(out)) {
        child.stdout.resume();
        done();
      }
    });
    child.once('exit', (code) => failed(new Error(`redis-server exited (${code}): ${out}`)));
  });
  return { child, url: `unix://${socket}` };
}

export function readLoadAvg() {
  try {
    return readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' ');
  } catch {
    return 'n/a';
  }
}
