#!/usr/bin/env node
// Server CPU per request (µs) of the meters scenario (bench/scenarios/meters.js): the endpoint with
// two meters and a settle against the same endpoint without meters, in one process and through
// Redis, in interleaved rounds. CPU time of the server process (/proc/<pid>/stat) divided by the
// answers it sent: on a loaded machine it is far steadier than requests per second, which follow
// what the other processes leave. For profiling work; `npm run bench` keeps the req/s verdicts.
//   npm run build && node bench/meters-cpu.js [--rounds 4] [--duration 5] [--no-store] [--prof dir] [--compare bin] [--only keys]
// --rate <n>: at most n requests a second in all (autocannon's overallRate), the same for every server: the
// CPU per request of servers loaded alike (a busier server ends more answers per loop turn, each for less).
// --compare <bin>: also another build's CLI (an older checkout's bin/mockapi.js), its servers' keys ending in `@compare`.
// --prof <dir>: the metered servers run with --cpu-prof, their profiles written to <dir> at exit.
import { spawn, spawnSync } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { fileURLToPath } from 'node:url';
import { API_KEY, metersYaml } from './configs.js';

const { values: flags } = parseArgs({
  options: {
    rounds: { type: 'string', default: '4' },
    duration: { type: 'string', default: '5' },
    connections: { type: 'string', default: '50' },
    'no-store': { type: 'boolean', default: false },
    prof: { type: 'string' },
    only: { type: 'string' },
    compare: { type: 'string' },
    rate: { type: 'string' },
  },
});
const CLI = fileURLToPath(new URL('../bin/mockapi.js', import.meta.url));
/** utime + stime of a process, in µs. */
function cpuMicros(pid) {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
  const ticks = Number(fields[11]) + Number(fields[12]);
  return (ticks * 1e6) / CLK_TCK;
}
const CLK_TCK = Number(spawnSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).stdout.trim()) || 100;

function start(args, nodeArgs = [], cli = CLI) {
  const child = spawn(process.execPath, [...nodeArgs, cli, ...args], { stdio: ['ignore', 'pipe', 'inherit'] });
  return new Promise((resolve, reject) => {
    let out = '';
    child.once('exit', (code) => reject(new Error(`server exited (${code}): ${out}`)));
    child.stdout.on('data', function onData(chunk) {
      out += chunk;
      const match = /listening on (http:\/\/[^\s]+)/.exec(out);
      if (match === null) return;
      child.stdout.removeListener('data', onData);
      child.stdout.resume();
      resolve({ child, url: match[1] });
    });
  });
}

async function startRedis(dir) {
  const socket = join(dir, 'redis.sock');
  const child = spawn(
    'redis-server',
    ['--port', '0', '--unixsocket', socket, '--save', '', '--appendonly', 'no', '--dir', dir],
    { stdio: ['ignore', 'pipe', 'pipe'] },
  );
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

const { default: autocannon } = await import('autocannon');
const dir = await mkdtemp(join(tmpdir(), 'mockapi-meters-cpu-'));
const plain = join(dir, 'off.yaml');
const metered = join(dir, 'on.yaml');
await writeFile(plain, metersYaml(false));
await writeFile(metered, metersYaml(true));
const redis = flags['no-store'] ? undefined : await startRedis(dir);
const serve = (file, extra = []) => ['serve', '-c', file, '--port', '0', '--no-state', '--log', 'off', ...extra];
const prof = (on) => (on && flags.prof !== undefined ? ['--cpu-prof', '--cpu-prof-dir', flags.prof] : []);
let servers = [
  { key: 'plain', args: serve(plain), node: prof(true) },
  { key: 'metered', args: serve(metered), node: prof(true) },
];
if (redis !== undefined)
  servers.push(
    { key: 'plainStore', args: serve(plain, ['--store', redis.url]), node: prof(true) },
    { key: 'meteredStore', args: serve(metered, ['--store', redis.url]), node: prof(true) },
  );
if (flags.compare !== undefined)
  servers = servers.flatMap((s) => [s, { ...s, key: `${s.key}@compare`, cli: flags.compare, node: [] }]);
if (flags.only !== undefined) servers = servers.filter((s) => flags.only.split(',').includes(s.key));
for (const server of servers) Object.assign(server, await start(server.args, server.node, server.cli), { runs: [] });

const load = (server, duration) =>
  autocannon({
    url: `${server.url}/mock/users/42`,
    headers: { 'x-api-key': API_KEY },
    connections: Number(flags.connections),
    duration,
    timeout: 5,
    ...(flags.rate === undefined ? {} : { overallRate: Number(flags.rate) }),
  });
for (const server of servers) await load(server, 2);
const rounds = Number(flags.rounds);
for (let round = 1; round <= rounds; round++) {
  for (const server of round % 2 === 1 ? servers : [...servers].reverse()) {
    const before = cpuMicros(server.child.pid);
    const redisBefore = redis === undefined ? 0 : cpuMicros(redis.child.pid);
    const result = await load(server, Number(flags.duration));
    const used = cpuMicros(server.child.pid) - before;
    const redisUsed = redis === undefined ? 0 : cpuMicros(redis.child.pid) - redisBefore;
    const answers = result['2xx'];
    if (result.non2xx + result.errors + result.timeouts > 0)
      throw new Error(`${server.key}: ${result.non2xx} non-2xx, ${result.errors} errors`);
    server.runs.push(used / answers);
    if (redisUsed > 0) (server.redisRuns ??= []).push(redisUsed / answers);
    process.stderr.write(
      `  round ${round} ${server.key.padEnd(21)} ${(used / answers).toFixed(1)} µs/request (${answers} answers${redisUsed > 0 ? `; redis-server ${(redisUsed / answers).toFixed(1)} µs/request` : ''})\n`,
    );
  }
}
const median = (values) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];
const figure = Object.fromEntries(servers.map((s) => [s.key, median(s.runs)]));
for (const server of servers)
  process.stdout.write(
    `${server.key.padEnd(21)} ${figure[server.key].toFixed(1)} µs/request (median of ${server.runs.map((r) => r.toFixed(1)).join(' / ')})${server.redisRuns === undefined ? '' : `; redis-server ${median(server.redisRuns).toFixed(1)} µs/request (median of ${server.redisRuns.map((r) => r.toFixed(1)).join(' / ')})`}\n`,
  );
if (figure.plain !== undefined && figure.metered !== undefined)
  process.stdout.write(
    `one process: metered/plain CPU ${(figure.metered / figure.plain).toFixed(3)} (throughput ratio at most ${(figure.plain / figure.metered).toFixed(3)})\n`,
  );
if (figure.plainStore !== undefined && figure.meteredStore !== undefined)
  process.stdout.write(
    `through Redis: metered/plain CPU ${(figure.meteredStore / figure.plainStore).toFixed(3)} (throughput ratio at most ${(figure.plainStore / figure.meteredStore).toFixed(3)})\n`,
  );
for (const key of ['metered', 'meteredStore']) {
  const base = key === 'metered' ? 'plain' : 'plainStore';
  const plainOf = figure[`${base}@compare`] ?? figure[base];
  if (figure[`${key}@compare`] !== undefined && plainOf !== undefined)
    process.stdout.write(`${key}@compare: metered/plain CPU ${(figure[`${key}@compare`] / plainOf).toFixed(3)}\n`);
}
for (const server of servers) {
  const exited = new Promise((resolve) => server.child.once('exit', resolve));
  server.child.kill('SIGTERM');
  await exited;
}
redis?.child.kill('SIGKILL');
await rm(dir, { recursive: true, force: true });
