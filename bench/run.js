#!/usr/bin/env node
// mockapi's benchmark (issue 5): every figure is a ratio against a baseline measured in the same
// run, loads are interleaved (baseline, mockapi, baseline, mockapi…) and the median of the rounds
// counts. Servers run on core 0, the load generator on core 1 (taskset, when there are two cores;
// the workers figure gives its servers every core but the load generator's). Only 127.0.0.1
// traffic; every load is bounded in time. See BENCHMARKS.md.
//
//   npm run bench                      build, then the whole run (about 8 minutes on two cores)
//   node bench/run.js --quick          shorter loads, soak and fewer cold starts (about 2 minutes)
//   node bench/run.js --only workers   serve --workers n against a bare node:http cluster of n
//   node bench/run.js --only throughput,coldstart
//   node bench/run.js --help
import { spawn, spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, openSync, closeSync, readFileSync } from 'node:fs';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { get, request } from 'node:http';
import { createServer } from 'node:net';
import { availableParallelism, tmpdir, cpus } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { API_KEY, BIG_TARGET, BODY_TEXT, DYNAMIC_LOADS, dynamicYaml, KEYED_KEYS, keyedYaml, manyEndpointsYaml, oneEndpointYaml } from './configs.js';
import { defaultTool, runLoad } from './load.js';
import { storeCurve } from './store-curve.js';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const CLI = resolve(process.argv.includes('--cli') ? process.argv[process.argv.indexOf('--cli') + 1] : join(ROOT, 'bin', 'mockapi.js'));
// config-timing.js imports the dist/ beside the CLI measured.
const DIST = join(dirname(CLI), '..', 'dist');
const BARE = join(ROOT, 'bench', 'bare-server.js');
const CONFIG_TIMING = join(ROOT, 'bench', 'config-timing.js');
const SCENARIOS = ['throughput', 'logging', 'endpoints', 'stubs', 'keys', 'dynamic', 'store', 'workers', 'coldstart', 'memory'];
// Keep-alive connections of the throughput scenario's p99 figure under many connections.
const WIDE = 256;
// Run-time stubs present while a config endpoint is loaded (the `stubs` scenario).
const STUB_COUNT = 1000;
// Not run by default: --log pretty with the log file in the config's own folder (see BENCHMARKS.md).
const EXTRA_SCENARIOS = ['logbeside'];

const HELP = `Usage: node bench/run.js [options]   (npm run bench builds first)

  --quick               3 s loads, 10 s soak, 5 cold starts (default: 8 s, 60 s, 9)
  --only <list>         scenarios, comma-separated: ${SCENARIOS.join(', ')}
                        (and, not run by default: ${EXTRA_SCENARIOS.join(', ')})
  --rounds <n>          interleaved rounds per throughput figure (default 5; the median of the
                        per-round ratios counts); odd rounds load the servers in one order, even
                        rounds in reverse, each load after 1 s of unmeasured load
  --duration <s>        seconds per load (default 8)
  --soak <s>            seconds of the memory soak (default 60)
  --connections <n>     keep-alive connections (default 50)
  --tool <wrk|autocannon>  load generator (default: wrk when on PATH)
  --baseline <plain|coalesced>  the bare node:http server: plain (default, what the targets are
                        set against) or coalesced (answers of one loop turn ended together, as
                        mockapi writes them: what mockapi's own steps cost, apart from how it writes)
  --no-pin              do not pin servers and client to different cores
  --json <file>         also write the results as JSON
  --cli <bin>           the mockapi CLI to measure (default: this checkout's bin/mockapi.js)
  --compare <bin>       also load another build's CLI (e.g. an older checkout's bin/mockapi.js)
                        in the same interleaved rounds, for before/after figures
`;

const { values: flags } = parseArgs({
  options: {
    quick: { type: 'boolean', default: false },
    only: { type: 'string' },
    rounds: { type: 'string' },
    duration: { type: 'string' },
    soak: { type: 'string' },
    connections: { type: 'string', default: '50' },
    tool: { type: 'string' },
    baseline: { type: 'string', default: 'plain' },
    'no-pin': { type: 'boolean', default: false },
    json: { type: 'string' },
    compare: { type: 'string' },
    cli: { type: 'string' },
    help: { type: 'boolean', default: false },
  },
});
if (flags.help) {
  process.stdout.write(HELP);
  process.exit(0);
}

const quick = flags.quick;
const opts = {
  rounds: Number(flags.rounds ?? 5),
  durationS: Number(flags.duration ?? (quick ? 3 : 8)),
  warmupS: quick ? 1 : 2,
  settleS: 1,
  soakS: Number(flags.soak ?? (quick ? 10 : 60)),
  coldRuns: quick ? 5 : 9,
  connections: Number(flags.connections),
  tool: flags.tool ?? defaultTool(),
};
if (flags.baseline !== 'plain' && flags.baseline !== 'coalesced') fail('--baseline is plain or coalesced');
/** The bare server's environment: the body, and whether it coalesces its writes (--baseline). */
const BARE_ENV = { BENCH_BODY: BODY_TEXT, BENCH_COALESCE: flags.baseline === 'coalesced' ? '1' : '0' };
const BARE_LABEL = flags.baseline === 'coalesced' ? 'bare node:http (coalesced)' : 'bare node:http';
const selected = new Set(flags.only === undefined ? SCENARIOS : flags.only.split(',').map((s) => s.trim()));
for (const name of selected) {
  if (!SCENARIOS.includes(name) && !EXTRA_SCENARIOS.includes(name)) fail(`unknown scenario "${name}" (one of ${[...SCENARIOS, ...EXTRA_SCENARIOS].join(', ')})`);
}
for (const [name, value] of Object.entries(opts)) if (typeof value === 'number' && !(value > 0)) fail(`--${name} must be a positive number`);

// Pinning: servers on core 0, the client on core 1. autocannon runs inside this process, so the
// driver re-runs itself on core 1; wrk is started on core 1 explicitly.
// cpus(), not availableParallelism(): the re-run driver is itself restricted to core 1.
const CORES = cpus().length;
const canPin = !flags['no-pin'] && CORES >= 2 && spawnSync('taskset', ['-V']).error === undefined;
if (canPin && process.env.MOCKAPI_BENCH_PINNED !== '1') {
  const child = spawnSync('taskset', ['-c', '1', process.execPath, ...process.argv.slice(1)], {
    stdio: 'inherit',
    env: { ...process.env, MOCKAPI_BENCH_PINNED: '1' },
  });
  process.exit(child.status ?? 1);
}
const SERVER_CORE = canPin ? '0' : undefined;
const CLIENT_CORE = canPin ? 1 : undefined;

if (!existsSync(join(DIST, 'cli', 'cli.js'))) fail(`${DIST} is missing: run \`npm run build\` (or \`npm run bench\`, which builds)`);

function fail(message) {
  process.stderr.write(`bench: ${message}\n`);
  process.exit(2);
}

function progress(message) {
  process.stderr.write(`  ${message}\n`);
}

// ---------------------------------------------------------------------------------------------
// Configs

const AUTH = { 'x-api-key': API_KEY };
// The `keys` scenario's requests go round the ten keys of `keys:` (see keyedYaml), one key a request.
const KEYED_AUTHS = KEYED_KEYS.map((key) => ({ 'x-api-key': key }));

// ---------------------------------------------------------------------------------------------
// Processes

const children = new Set();

function pinned(args) {
  return SERVER_CORE === undefined ? [process.execPath, args] : ['taskset', ['-c', SERVER_CORE, process.execPath, ...args]];
}

/**
 * Starts a server (bare or the mockapi CLI) and resolves with its URL once it printed its ready
 * line. `stdout`: 'pipe' (read the line) or a file descriptor (then `port` must be given and the
 * server is polled until it answers).
 */
async function startServer(name, args, { env = {}, stdout = 'pipe', port, readyTimeoutMs = 30_000, command } = {}) {
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
  const url = await Promise.race([ready, exited.then((code) => Promise.reject(new Error(`${name} exited (${code}): ${stderr}`)))]);
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

function waitForLine(child, timeoutMs) {
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

async function pollUntilUp(url, timeoutMs) {
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

/** GET without keep-alive; resolves with {status, body}. */
function fetchText(url, headers = {}) {
  return new Promise((resolve, reject) => {
    const req = get(url, { headers, agent: false }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (chunk) => (body += chunk));
      res.on('end', () => resolve({ status: res.statusCode, body }));
    });
    req.setTimeout(5000, () => req.destroy(new Error(`timeout: ${url}`)));
    req.on('error', reject);
  });
}

/** Adds STUB_COUNT run-time stubs through the admin API (static and parameter routes, none the loaded path's). */
async function addStubs(url) {
  for (let i = 0; i < STUB_COUNT; i++) {
    const path = i % 2 === 0 ? `/stubbed${i}/items` : `/stubbed${i}/items/:id`;
    const body = JSON.stringify({ endpoint: { method: 'GET', path, response: { body: { stub: i } } } });
    const status = await new Promise((resolve, reject) => {
      const req = request(`${url}/__mockapi/stubs`, { method: 'POST', agent: false, headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) } }, (res) => {
        res.resume();
        res.on('end', () => resolve(res.statusCode));
      });
      req.on('error', reject);
      req.end(body);
    });
    if (status !== 201) throw new Error(`adding stub ${i}: ${status}`);
  }
}

function freePort() {
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
function rssMb(pid) {
  try {
    const match = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return match === null ? undefined : Number(match[1]) / 1024;
  } catch {
    return undefined;
  }
}

/** Samples a process's RSS every `everyMs` until stopped; returns the samples (MB). */
function sampleRss(pid, everyMs = 1000) {
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

function runNode(args, timeoutMs = 60_000) {
  const [cmd, argv] = pinned(args);
  const result = spawnSync(cmd, argv, { encoding: 'utf8', timeout: timeoutMs, env: { ...process.env, MOCKAPI_BENCH_DIST: DIST } });
  if (result.status !== 0) throw new Error(`${args.join(' ')} failed (${result.status ?? result.signal}): ${result.stderr}`);
  return result.stdout;
}

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));
const median = (values) => {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
};

// ---------------------------------------------------------------------------------------------
// Results

const results = [];

/**
 * Records a figure. `check`: `{ ratio, min }` or `{ ratio, max }` (a ratio against a baseline of
 * this run), or `{ value, max }` (an absolute bound). Without `check` the figure is information.
 */
function record(name, shown, check, note) {
  let verdict = '';
  let target = '';
  let ratio = '';
  if (check !== undefined) {
    const measured = check.ratio ?? check.value;
    if ('ratio' in check) ratio = `${check.ratio.toFixed(2)}×`;
    if (check.min !== undefined) {
      target = 'ratio' in check ? `≥ ${check.min}×` : `≥ ${check.min}`;
      verdict = measured >= check.min ? 'PASS' : 'FAIL';
    } else {
      target = 'ratio' in check ? `≤ ${check.max}×` : `≤ ${check.max}${check.unit ?? ''}`;
      verdict = measured <= check.max ? 'PASS' : 'FAIL';
    }
    if (check.invalid) verdict = 'FAIL';
  }
  results.push({ name, shown, target, ratio, verdict, note: note ?? '' });
  progress(`${verdict ? `${verdict} ` : ''}${name}: ${shown}${ratio ? ` (${ratio}, target ${target})` : target ? ` (target ${target})` : ''}${note ? ` — ${note}` : ''}`);
}

function printTable() {
  const rows = [['figure', 'measured', 'ratio', 'target', 'result'], ...results.map((r) => [r.name, r.shown, r.ratio, r.target, r.verdict])];
  const widths = rows[0].map((_, col) => Math.max(...rows.map((row) => row[col].length)));
  const line = (row) => `| ${row.map((cell, col) => cell.padEnd(widths[col])).join(' | ')} |`;
  const out = [line(rows[0]), `|${widths.map((w) => '-'.repeat(w + 2)).join('|')}|`, ...rows.slice(1).map(line)];
  const notes = results.filter((r) => r.note !== '').map((r) => `- ${r.name}: ${r.note}`);
  process.stdout.write(`\n${out.join('\n')}\n${notes.length > 0 ? `\n${notes.join('\n')}\n` : ''}`);
}

const fmtRps = (rps) => `${Math.round(rps).toLocaleString('en-US')} req/s`;
const fmtMs = (ms) => (ms < 10 ? `${ms.toFixed(2)} ms` : `${Math.round(ms)} ms`);
const fmtMb = (mb) => `${mb.toFixed(1)} MB`;

// ---------------------------------------------------------------------------------------------
// Scenarios

async function throughputScenarios(dir, files) {
  const wantBare = ['throughput', 'logging', 'logbeside', 'store', 'keys'].some((name) => selected.has(name));
  // store is also read against one in-process mockapi.
  const wantOff = ['throughput', 'endpoints', 'stubs', 'store', 'keys'].some((name) => selected.has(name));
  // The shared store: one process through Redis (--workers with it: the store curve, bench/store-curve.js).
  const wantStore = files.store !== undefined && selected.has('store');
  const storeArgs = ['--store', files.store];
  const servers = [];
  // Request logs go to a folder of their own: the config's folder is watched (see logbeside).
  const logFile = join(dir, 'out', 'requests.log');
  const serveArgs = (file, log) => [CLI, 'serve', '-c', file, '--port', '0', '--no-state', '--log', log];
  if (wantBare) servers.push({ key: 'bare', label: BARE_LABEL, args: [BARE], env: BARE_ENV });
  if (wantOff) servers.push({ key: 'off', label: 'mockapi --log off', args: serveArgs(files.one, 'off') });
  if (selected.has('throughput')) servers.push({ key: 'noJournal', label: 'mockapi --log off, server.journal: 0', args: serveArgs(files.noJournal, 'off') });
  if (flags.compare !== undefined) {
    const compareArgs = [flags.compare, ...serveArgs(files.one, 'off').slice(1)];
    servers.push({ key: 'cmp', label: 'compare build --log off', args: compareArgs });
    if (selected.has('logging')) servers.push({ key: 'cmpPretty', label: 'compare build --log pretty', args: [flags.compare, ...serveArgs(files.one, 'pretty').slice(1)], logFile: join(dir, 'out', 'compare.log') });
  }
  if (selected.has('logging')) servers.push({ key: 'pretty', label: 'mockapi --log pretty', args: serveArgs(files.one, 'pretty'), logFile });
  if (selected.has('logbeside')) servers.push({ key: 'beside', label: 'mockapi --log pretty, log beside config', args: serveArgs(files.one, 'pretty'), logFile: join(dir, 'beside.log') });
  if (selected.has('endpoints')) servers.push({ key: 'big', label: 'mockapi 10k endpoints', args: serveArgs(files.big, 'off') });
  if (selected.has('stubs')) servers.push({ key: 'stubs', label: `mockapi ${STUB_COUNT} stubs`, args: serveArgs(files.one, 'off'), stubs: true });
  if (selected.has('keys')) servers.push({ key: 'keys', label: 'mockapi 10 keys + endpoint limit', args: serveArgs(files.keyed, 'off'), auth: KEYED_AUTHS[0], rotate: KEYED_AUTHS });
  if (selected.has('throughput')) {
    // p99 under many connections (WIDE): bare and mockapi again, and a bare server that writes its
    // answers together at the end of the loop turn as mockapi does (src/http/write-batch.ts), to
    // tell the batching's own effect on the tail from the rest of the pipeline's.
    servers.push({ key: 'bareWide', label: `${BARE_LABEL}, ${WIDE} connections`, same: 'bare', connections: WIDE });
    servers.push({ key: 'coalescedWide', label: `bare node:http (coalesced), ${WIDE} connections`, args: [BARE], env: { ...BARE_ENV, BENCH_COALESCE: '1' }, connections: WIDE });
    servers.push({ key: 'offWide', label: `mockapi --log off, ${WIDE} connections`, same: 'off', connections: WIDE });
  }
  if (wantStore) servers.push({ key: 'store', label: 'mockapi --store (Redis)', args: [...serveArgs(files.one, 'off'), ...storeArgs] });
  if (wantStore && flags.compare !== undefined) servers.push({ key: 'cmpStore', label: 'compare build --store (Redis)', args: [flags.compare, ...serveArgs(files.one, 'off').slice(1), ...storeArgs] });

  const one = '/mock/users/42';
  const paths = { bareWide: one, coalescedWide: one, offWide: one, bare: one, off: one, noJournal: one, pretty: one, beside: one, cmp: one, cmpPretty: one, store: one, cmpStore: one, stubs: one, keys: one, big: `/mock/r${BIG_TARGET}/items/42` };
  for (const server of servers) {
    if (server.same !== undefined) {
      server.handle = servers.find((other) => other.key === server.same).handle; // the same process, loaded otherwise
      continue;
    }
    if (server.logFile === undefined) {
      server.handle = await startServer(server.label, server.args, { env: server.env });
    } else {
      // Request lines go to a file, so the ready line cannot be read: pick the port, then poll.
      const port = await freePort();
      const fd = openSync(server.logFile, 'w');
      const args = server.args.map((arg, i) => (server.args[i - 1] === '--port' ? String(port) : arg));
      server.handle = await startServer(server.label, args, { stdout: fd, port });
      closeSync(fd);
    }
    if (server.stubs) await addStubs(server.handle.url);
    for (const auth of server.rotate ?? [server.auth ?? AUTH]) {
      const check = await fetchText(`${server.handle.url}${paths[server.key]}`, auth);
      if (check.status !== 200 || check.body !== BODY_TEXT) throw new Error(`${server.label}: unexpected answer ${check.status} ${check.body}`);
    }
  }

  const load = (server, durationS) =>
    runLoad({
      tool: opts.tool,
      url: `${server.handle.url}${paths[server.key]}`,
      headers: server.key === 'bare' || server.same === 'bare' || server.key === 'coalescedWide' ? {} : (server.auth ?? AUTH),
      ...(server.rotate === undefined ? {} : { headerSets: server.rotate }),
      durationS,
      connections: server.connections ?? opts.connections,
      pinCore: CLIENT_CORE,
    });

  progress(`warm-up: ${opts.warmupS} s each`);
  for (const server of servers) await load(server, opts.warmupS);

  const runs = Object.fromEntries(servers.map((s) => [s.key, []]));
  const peakRss = Object.fromEntries(servers.map((s) => [s.key, 0]));
  for (let round = 1; round <= opts.rounds; round++) {
    // Every other round in reverse order (A B C, C B A, …): a drift of the machine during a round
    // then favours no server, and each server is measured first as often as last.
    const order = round % 2 === 1 ? servers : [...servers].reverse();
    for (const server of order) {
      // The others were loaded meanwhile: a short unmeasured load first, so the measured one
      // starts from a warm server (caches, JIT, connections) as the warm-up above left it.
      await load(server, opts.settleS);
      const stop = sampleRss(server.handle.pid);
      const result = await load(server, opts.durationS);
      peakRss[server.key] = Math.max(peakRss[server.key], ...stop());
      runs[server.key].push(result);
      progress(
        `round ${round}/${opts.rounds} ${server.label}: ${fmtRps(result.rps)}, p99 ${fmtMs(result.p99)}` +
          (result.non2xx + result.errors > 0 ? `, ${result.non2xx} non-2xx, ${result.errors} errors` : ''),
      );
    }
  }
  for (const server of servers) {
    if (server.same !== undefined) continue;
    await server.handle.stop();
    if (server.logFile !== undefined) await rm(server.logFile, { force: true });
  }

  const summary = (key) => {
    const list = runs[key];
    const bad = list.reduce((sum, r) => sum + r.non2xx + r.errors, 0);
    return { rps: median(list.map((r) => r.rps)), p99: median(list.map((r) => r.p99)), bad, all: list.map((r) => Math.round(r.rps)).join(' / ') };
  };
  // A ratio is the median of per-round ratios: each round loads the servers one after the other,
  // so pairing within a round cancels the drift of whatever else runs on the machine.
  const paired = (key, base, field = 'rps') => {
    const ratios = runs[key].map((r, i) => r[field] / runs[base][i][field]);
    return { ratio: median(ratios), each: ratios.map((x) => x.toFixed(2)).join(' / ') };
  };
  const invalidNote = (s) => (s.bad > 0 ? `${s.bad} non-2xx answers or socket errors: figure not valid` : undefined);
  const bare = wantBare ? summary('bare') : undefined;
  const off = wantOff ? summary('off') : undefined;
  if (bare) record(`${BARE_LABEL} (baseline)`, fmtRps(bare.rps), undefined, `rounds: ${bare.all}`);
  if (selected.has('throughput')) {
    const vsBare = paired('off', 'bare');
    record('full pipeline, --log off (journal on, 1000)', fmtRps(off.rps), { ratio: vsBare.ratio, min: 0.85, invalid: off.bad > 0 }, invalidNote(off) ?? `rounds: ${off.all}; ratio per round: ${vsBare.each}`);
    const noJournal = summary('noJournal');
    const noJournalVsBare = paired('noJournal', 'bare');
    record('full pipeline, --log off, server.journal: 0', fmtRps(noJournal.rps), { ratio: noJournalVsBare.ratio, min: 0.85, invalid: noJournal.bad > 0 }, invalidNote(noJournal) ?? `rounds: ${noJournal.all}; ratio per round: ${noJournalVsBare.each}`);
    record('p99 latency bare', fmtMs(bare.p99));
    const p99 = paired('off', 'bare', 'p99');
    const p50 = paired('off', 'bare', 'p50');
    const p90 = paired('off', 'bare', 'p90');
    record('p99 latency full pipeline', fmtMs(off.p99), { ratio: p99.ratio, max: 1.5 }, `ratio per round: ${p99.each}; p50 ${p50.ratio.toFixed(2)}×, p90 ${p90.ratio.toFixed(2)}× bare`);
    const wideBare = summary('bareWide');
    const wide = summary('offWide');
    const wideP99 = paired('offWide', 'bareWide', 'p99');
    const coalescedP99 = paired('coalescedWide', 'bareWide', 'p99');
    record(`p99 latency bare, ${WIDE} connections`, fmtMs(wideBare.p99), undefined, `${fmtRps(wideBare.rps)}; a bare server writing as mockapi does (answers of a loop turn together): p99 ${coalescedP99.ratio.toFixed(2)}× (per round ${coalescedP99.each})`);
    record(
      `p99 latency full pipeline, ${WIDE} connections`,
      fmtMs(wide.p99),
      { ratio: wideP99.ratio, max: 1.5, invalid: wide.bad > 0 },
      invalidNote(wide) ?? `ratio per round: ${wideP99.each}; p50 ${paired('offWide', 'bareWide', 'p50').ratio.toFixed(2)}×, ${paired('offWide', 'bareWide').ratio.toFixed(2)}× bare's req/s`,
    );
    record('RSS under load (peak, --log off)', fmtMb(peakRss.off), { value: peakRss.off, max: 120, unit: ' MB' });
  }
  if (selected.has('logging')) {
    const pretty = summary('pretty');
    const vsBare = paired('pretty', 'bare');
    record('--log pretty (stdout to a file)', fmtRps(pretty.rps), { ratio: vsBare.ratio, min: 0.6, invalid: pretty.bad > 0 }, invalidNote(pretty) ?? `rounds: ${pretty.all}; ratio per round: ${vsBare.each}`);
  }
  if (selected.has('logbeside')) {
    const beside = summary('beside');
    record('--log pretty, log file in the config folder', fmtRps(beside.rps), undefined, `${paired('beside', 'bare').ratio.toFixed(2)}× bare; rounds: ${beside.all}`);
  }
  if (flags.compare !== undefined && bare !== undefined) {
    const cmp = summary('cmp');
    record('compare build, --log off', fmtRps(cmp.rps), undefined, `${paired('cmp', 'bare').ratio.toFixed(2)}× bare, p99 ${fmtMs(cmp.p99)}; rounds: ${cmp.all}`);
    if (selected.has('logging')) {
      const cmpPretty = summary('cmpPretty');
      record('compare build, --log pretty', fmtRps(cmpPretty.rps), undefined, `${paired('cmpPretty', 'bare').ratio.toFixed(2)}× bare; rounds: ${cmpPretty.all}`);
    }
  }
  if (wantStore) {
    const store = summary('store');
    const vsBare = paired('store', 'bare');
    record('shared store (Redis), --log off', fmtRps(store.rps), { ratio: vsBare.ratio, min: 0.5, invalid: store.bad > 0 }, invalidNote(store) ?? `rounds: ${store.all}; ratio per round: ${vsBare.each}; ${paired('store', 'off').ratio.toFixed(2)}× one in-process mockapi`);
    if (flags.compare !== undefined) {
      const cmpStore = summary('cmpStore');
      record('compare build, shared store (Redis)', fmtRps(cmpStore.rps), undefined, `${paired('cmpStore', 'bare').ratio.toFixed(2)}× bare; this build ${paired('store', 'cmpStore').ratio.toFixed(2)}× it; rounds: ${cmpStore.all}`);
    }
  }
  if (!wantStore && selected.has('store')) record('shared store and --workers with it', 'skipped', undefined, 'redis-server is not installed');
  if (selected.has('keys')) {
    const keyed = summary('keys');
    const vsBare = paired('keys', 'bare');
    record('10 keys of keys: on a plan (requests round them), an endpoint limit, --log off', fmtRps(keyed.rps), { ratio: vsBare.ratio, min: 0.85, invalid: keyed.bad > 0 }, invalidNote(keyed) ?? `vs bare; rounds: ${keyed.all}; ratio per round: ${vsBare.each}; ${paired('keys', 'off').ratio.toFixed(2)}× mockapi with one key and no endpoint limit`);
  }
  if (selected.has('stubs')) {
    const stubbed = summary('stubs');
    const vsNone = paired('stubs', 'off');
    record(`a config endpoint with ${STUB_COUNT.toLocaleString('en-US')} stubs present`, fmtRps(stubbed.rps), { ratio: vsNone.ratio, min: 0.9, invalid: stubbed.bad > 0 }, invalidNote(stubbed) ?? `vs no stubs; rounds: ${stubbed.all}; ratio per round: ${vsNone.each}`);
  }
  if (selected.has('endpoints')) {
    const big = summary('big');
    const vsOne = paired('big', 'off');
    record('10,000 endpoints, --log off', fmtRps(big.rps), { ratio: vsOne.ratio, min: 0.9, invalid: big.bad > 0 }, invalidNote(big) ?? `vs 1 endpoint; rounds: ${big.all}; ratio per round: ${vsOne.each}`);
  }
}

/** `serve --workers n --store` for n = 1, 2 (4, 8) against one process with the store: see bench/store-curve.js. */
async function storeCurveScenario(files, redis) {
  const path = '/mock/users/42';
  await storeCurve({
    serveArgs: [CLI, 'serve', '-c', files.one, '--port', '0', '--no-state', '--log', 'off', '--store', files.store],
    redisPid: redis.child.pid,
    cores: CORES,
    clientCore: CLIENT_CORE,
    serverCore: SERVER_CORE,
    opts,
    startServer,
    load: (server, durationS) => runLoad({ tool: opts.tool, url: `${server.handle.url}${path}`, headers: AUTH, durationS, connections: opts.connections, pinCore: CLIENT_CORE }),
    async check(server) {
      const answer = await fetchText(`${server.handle.url}${path}`, AUTH);
      if (answer.status !== 200 || answer.body !== BODY_TEXT) throw new Error(`${server.label}: unexpected answer ${answer.status} ${answer.body}`);
    },
    record,
    progress,
    median,
    fmtRps,
  });
}

/**
 * `serve --workers n` (SPEC §12: workers scale like node:cluster): each n against a bare node:http
 * cluster of n processes in the same interleaved rounds, and `--workers 1` against one mockapi
 * process; after each measured load (a burst of `--duration` s), the delay of the first answer on a
 * new connection; and the primary's peak RSS over all its loads, above its RSS at rest. n is 1 and
 * 2, and 4 and 8 where there are cores for them beside the load generator's. Config without limits
 * (no store: the bare cluster has none either), --log off, journal on (1000).
 */
async function workersScenario(files) {
  // On a machine of 12 cores or more the load generator gets the last 4 (wrk, a thread each), so
  // that it is not what 4 and 8 workers wait on; the servers get the rest. Below that: the client
  // on core 1 (one wrk thread), the servers on every other core (on two cores: core 0).
  const wideClient = CLIENT_CORE !== undefined && CORES >= 12;
  const clientCores = wideClient ? `${CORES - 4}-${CORES - 1}` : CLIENT_CORE;
  const clientThreads = wideClient ? 4 : 1;
  const serverCores = CLIENT_CORE === undefined ? undefined : wideClient ? `0-${CORES - 5}` : CORES >= 3 ? `0,2-${CORES - 1}` : SERVER_CORE;
  const serverCoreCount = CLIENT_CORE === undefined ? availableParallelism() - 1 : wideClient ? CORES - 4 : Math.max(1, CORES - 1);
  const sizes = [1, 2, 4, 8].filter((n) => n <= 2 || n <= serverCoreCount);
  const start = (label, args, env = {}) =>
    serverCores === undefined ? startServer(label, args, { env, command: process.execPath }) : startServer(label, ['-c', serverCores, process.execPath, ...args], { env, command: 'taskset' });
  const path = '/mock/users/42';
  const load = (server, durationS) => runLoad({ tool: opts.tool, url: `${server.handle.url}${path}`, headers: server.bare ? {} : AUTH, durationS, connections: opts.connections, pinCore: clientCores, threads: clientThreads });
  const serve = [CLI, 'serve', '-c', files.noLimits, '--port', '0', '--no-state', '--log', 'off'];
  const one = { key: 'one', label: 'one mockapi process', args: serve };
  one.handle = await start(one.label, one.args);
  for (const n of sizes) {
    const servers = [
      ...(n === 1 ? [one] : []),
      ...(flags.compare === undefined ? [] : [{ key: 'cmp', label: `compare build --workers ${n}`, args: [flags.compare, ...serve.slice(1), '--workers', String(n)] }]),
      { key: 'bare', label: `bare node:http cluster of ${n}`, args: [BARE], env: { ...BARE_ENV, BENCH_WORKERS: String(n) }, bare: true },
      { key: 'workers', label: `mockapi --workers ${n}`, args: [...serve, '--workers', String(n)] },
    ];
    for (const server of servers) {
      server.handle ??= await start(server.label, server.args, server.env);
      const check = await fetchText(`${server.handle.url}${path}`, server.bare ? {} : AUTH);
      if (check.status !== 200 || check.body !== BODY_TEXT) throw new Error(`${server.label}: unexpected answer ${check.status} ${check.body}`);
    }
    const workers = servers.at(-1);
    const restRss = rssMb(workers.handle.pid) ?? 0;
    let peakRss = restRss;
    const firstAnswers = [];
    const cmpFirstAnswers = [];
    const runs = Object.fromEntries(servers.map((server) => [server.key, []]));
    progress(`--workers ${n}: warm-up ${opts.warmupS} s each`);
    for (const server of servers) await load(server, opts.warmupS);
    for (let round = 1; round <= opts.rounds; round++) {
      for (const server of round % 2 === 1 ? servers : [...servers].reverse()) {
        await load(server, opts.settleS);
        const stop = server === workers ? sampleRss(server.handle.pid, 200) : undefined;
        const result = await load(server, opts.durationS);
        runs[server.key].push(result);
        if (server === workers) {
          // Right after the burst: what queued up behind it (nothing, when no message crosses on a request's path).
          const started = performance.now();
          const first = await fetchText(`${server.handle.url}${path}`, AUTH);
          if (first.status !== 200) throw new Error(`${server.label}: ${first.status} after the burst`);
          firstAnswers.push(performance.now() - started);
          peakRss = Math.max(peakRss, ...stop());
        } else if (server.key === 'cmp') {
          const started = performance.now();
          await fetchText(`${server.handle.url}${path}`, AUTH);
          cmpFirstAnswers.push(performance.now() - started);
        }
        progress(`--workers ${n} round ${round}/${opts.rounds} ${server.label}: ${fmtRps(result.rps)}` + (result.non2xx + result.errors > 0 ? `, ${result.non2xx} non-2xx, ${result.errors} errors` : ''));
      }
    }
    for (const server of servers) if (server !== one) await server.handle.stop();
    const bad = (key) => runs[key].reduce((sum, r) => sum + r.non2xx + r.errors, 0);
    const rps = (key) => median(runs[key].map((r) => r.rps));
    const ratio = (key, base) => median(runs[key].map((r, i) => r.rps / runs[base][i].rps));
    const rounds = (key) => runs[key].map((r) => Math.round(r.rps)).join(' / ');
    const invalid = bad('workers') + bad('bare') > 0;
    const badNote = invalid ? `${bad('workers')} + ${bad('bare')} non-2xx answers or socket errors: figure not valid; ` : '';
    const where = serverCores === undefined ? 'not pinned' : `servers on core${serverCores.length > 1 ? 's' : ''} ${serverCores}, wrk (${clientThreads} thread${clientThreads > 1 ? 's' : ''}) on ${clientCores}`;
    if (n === 1) {
      record(`--workers 1 vs one mockapi process`, fmtRps(rps('workers')), { ratio: ratio('workers', 'one'), min: 0.85, invalid: invalid || bad('one') > 0 }, `${badNote}one process: ${fmtRps(rps('one'))} (rounds: ${rounds('one')}); --workers 1 rounds: ${rounds('workers')}`);
    }
    record(`--workers ${n} vs bare node:http cluster of ${n}`, fmtRps(rps('workers')), { ratio: ratio('workers', 'bare'), min: 0.75, invalid }, `${badNote}bare cluster: ${fmtRps(rps('bare'))} (rounds: ${rounds('bare')}); --workers rounds: ${rounds('workers')}; ${where}`);
    record(`--workers ${n}: first answer after a ${opts.durationS} s burst (worst)`, fmtMs(Math.max(...firstAnswers)), { value: Math.max(...firstAnswers), max: 100, unit: ' ms' }, `each round: ${firstAnswers.map(fmtMs).join(' / ')}`);
    if (flags.compare !== undefined) {
      record(`compare build --workers ${n}`, fmtRps(rps('cmp')), undefined, `${ratio('cmp', 'bare').toFixed(2)}× bare cluster; first answer after a burst (worst) ${fmtMs(Math.max(...cmpFirstAnswers))}; rounds: ${rounds('cmp')}`);
    }
    record(`--workers ${n}: primary RSS, peak above rest`, `+${fmtMb(peakRss - restRss)}`, { value: peakRss - restRss, max: 100, unit: ' MB' }, `at rest ${fmtMb(restRss)}, peak ${fmtMb(peakRss)}`);
  }
  await one.handle.stop();
}

/**
 * Dynamic answers (issue 14): a static endpoint, `when` on params and query, five request-derived
 * fields and ten seeded `fake.*` fields, each against bare node:http in the same interleaved rounds.
 */
async function dynamicScenarios(dir, files) {
  const serveArgs = (file) => [CLI, 'serve', '-c', file, '--port', '0', '--no-state', '--log', 'off', '--no-watch'];
  const loads = [
    { key: 'bare', label: BARE_LABEL, args: [BARE], env: BARE_ENV, path: '/mock/users/42', headers: {} },
    { key: 'static', label: 'static endpoint', args: serveArgs(files.one), path: '/mock/users/42', headers: AUTH, min: 0.9 },
    { key: 'when', label: 'when on params + query', shared: true, ...DYNAMIC_LOADS.when, min: 0.85 },
    { key: 'fields', label: 'five request-derived fields', shared: true, ...DYNAMIC_LOADS.fields, min: 0.75 },
    { key: 'fake', label: 'ten fake.* fields, seeded', shared: true, ...DYNAMIC_LOADS.fake, min: 0.35 },
    // A look-alike served at the root (`server.basePath: /`): the same static answer, another prefix.
    { key: 'root', label: 'static endpoint, basePath: /', figure: 'basePath: / (static endpoint at the root)', args: serveArgs(files.root), path: '/users/42', headers: AUTH, min: 0.9 },
  ];
  const bare = await startServer('bare node:http', loads[0].args, { env: loads[0].env });
  const single = await startServer('mockapi static', loads[1].args);
  const dynamic = await startServer('mockapi dynamic', serveArgs(files.dynamic));
  const root = await startServer('mockapi basePath: /', serveArgs(files.root));
  for (const l of loads) {
    l.handle = l.key === 'bare' ? bare : l.key === 'static' ? single : l.key === 'root' ? root : dynamic;
    l.headers = l.key === 'bare' ? {} : { ...AUTH, ...l.headers };
    const check = await fetchText(`${l.handle.url}${l.path}`, l.headers);
    if (check.status !== 200) throw new Error(`${l.label}: unexpected answer ${check.status} ${check.body}`);
    // An expression that fails gives null (SPEC §7), and a failing one is slow (faker throws):
    // a figure measured on such answers would say nothing about the answers the config asks for.
    const empty = l.shared ? nullFields(JSON.parse(check.body)) : [];
    if (empty.length > 0) throw new Error(`${l.label}: the answer has null in ${empty.join(', ')}: ${check.body}`);
  }
  const load = (l, durationS) => runLoad({ tool: opts.tool, url: `${l.handle.url}${l.path}`, headers: l.headers, durationS, connections: opts.connections, pinCore: CLIENT_CORE });
  progress(`dynamic warm-up: ${opts.warmupS} s each`);
  for (const l of loads) await load(l, opts.warmupS);
  const runs = Object.fromEntries(loads.map((l) => [l.key, []]));
  for (let round = 1; round <= opts.rounds; round++) {
    const order = round % 2 === 1 ? loads : [...loads].reverse();
    for (const l of order) {
      await load(l, opts.settleS);
      const result = await load(l, opts.durationS);
      runs[l.key].push(result);
      progress(`round ${round}/${opts.rounds} ${l.label}: ${fmtRps(result.rps)}`);
    }
  }
  for (const handle of [bare, single, dynamic, root]) await handle.stop();
  for (const l of loads.slice(1)) {
    const ratios = runs[l.key].map((r, i) => r.rps / runs.bare[i].rps);
    const bad = runs[l.key].reduce((sum, r) => sum + r.non2xx + r.errors, 0);
    const rps = median(runs[l.key].map((r) => r.rps));
    record(l.figure ?? `dynamic: ${l.label}`, fmtRps(rps), { ratio: median(ratios), min: l.min, invalid: bad > 0 }, bad > 0 ? `${bad} non-2xx or errors` : `ratio per round: ${ratios.map((x) => x.toFixed(2)).join(' / ')}`);
  }
}

/** The fields of a JSON answer whose value is null. */
function nullFields(value) {
  if (value === null || typeof value !== 'object') return [];
  return Object.entries(value).flatMap(([key, v]) => (v === null ? [key] : nullFields(v).map((inner) => `${key}.${inner}`)));
}

async function endpointTimings(dir, files) {
  // Load + validate (and compile) in a fresh process, median of 3.
  const loads = [];
  for (let i = 0; i < 3; i++) loads.push(JSON.parse(runNode([CONFIG_TIMING, 'load', files.big])));
  const loadMs = median(loads.map((l) => l.loadMs));
  const compileMs = median(loads.map((l) => l.compileMs));
  record('10k endpoints: load + validate', fmtMs(loadMs), { value: loadMs / 1000, max: 1, unit: ' s' }, `fresh process, loadConfig(); compile ${fmtMs(compileMs)} more`);

  // Hot reload through the CLI's watcher: write the file, poll health until it shows the new revision.
  const spawned = performance.now();
  const server = await startServer('mockapi 10k (watch)', [CLI, 'serve', '-c', files.big, '--port', '0', '--no-state', '--log', 'off']);
  record('10k endpoints: serve start → ready line', fmtMs(performance.now() - spawned), undefined, 'watching on (default)');
  const original = readFileSync(files.big, 'utf8');
  const times = [];
  try {
    for (let i = 0; i < 3; i++) {
      await sleep(300);
      const text = original.replace(/^project: .*$/m, `project: bench-10k-watch-${i}`);
      const revision = createHash('sha256').update(text).digest('hex');
      const started = performance.now();
      await writeFile(files.big, text);
      const deadline = started + 10_000;
      for (;;) {
        const health = await fetchText(`${server.url}/__mockapi/health`);
        if (JSON.parse(health.body).revision === revision) break;
        if (performance.now() > deadline) throw new Error('hot reload not seen within 10 s');
        await sleep(5);
      }
      times.push(performance.now() - started);
    }
  } finally {
    await writeFile(files.big, original);
    await server.stop();
  }
  const watchMs = median(times);
  record('10k endpoints: hot reload (file write → health)', fmtMs(watchMs), { value: watchMs / 1000, max: 0.5, unit: ' s' }, `CLI watcher, 50 ms debounce included; runs: ${times.map(fmtMs).join(' / ')}`);

  const inproc = JSON.parse(runNode([CONFIG_TIMING, 'reload', files.big, '3']));
  const inprocMs = median(inproc.reloadMs);
  record('10k endpoints: reload() in-process', fmtMs(inprocMs), undefined, `startMockServer().reload(), no watcher (the target is the hot reload's above); runs: ${inproc.reloadMs.map(fmtMs).join(' / ')}`);
  // Where a reload's time goes, step by step (one endpoint-free change: the project line).
  const { phases } = JSON.parse(runNode([CONFIG_TIMING, 'phases', files.big, '5']));
  const total = Object.values(phases).reduce((a, b) => a + b, 0);
  const steps = Object.entries(phases).map(([step, ms]) => `${step} ${fmtMs(ms)} (${Math.round((ms / total) * 100)}%)`);
  record('10k endpoints: a reload step by step', fmtMs(total), undefined, `median of 5: ${steps.join(', ')}; the CLI's hot reload adds the watcher's 50 ms debounce, the file read and the health poll`);
}

async function coldStart(files) {
  const timeToHealth = async (args, env) => {
    const started = performance.now();
    const server = await startServer('cold start', args, { env });
    const answer = await fetchText(`${server.url}/__mockapi/health`);
    const ms = performance.now() - started;
    await server.stop();
    if (answer.status !== 200) throw new Error(`health answered ${answer.status}`);
    return ms;
  };
  const variants = [
    { key: 'bare', args: [BARE], env: BARE_ENV },
    { key: 'serve', args: [CLI, 'serve', '-c', files.one, '--port', '0', '--no-state', '--log', 'off'] },
    { key: 'noWatch', args: [CLI, 'serve', '-c', files.one, '--port', '0', '--no-state', '--log', 'off', '--no-watch'] },
  ];
  const times = { bare: [], serve: [], noWatch: [] };
  for (let i = 0; i < opts.coldRuns; i++) for (const v of variants) times[v.key].push(await timeToHealth(v.args, v.env));
  const bare = median(times.bare);
  const serve = median(times.serve);
  const noWatch = median(times.noWatch);
  record('cold start bare node (spawn → 200)', fmtMs(bare), undefined, `median of ${opts.coldRuns}`);
  record('cold start mockapi serve (spawn → health 200)', fmtMs(serve), { ratio: serve / bare, max: 1.5 }, `watching on (default); median of ${opts.coldRuns}`);
  record('cold start mockapi serve --no-watch', fmtMs(noWatch), { ratio: noWatch / bare, max: 1.5 });
}

async function memory(dir, files) {
  // Idle: the default serve (watching on) after one request, then left alone. V8 gives back the
  // young generation it grew while loading the config only after several idle seconds, so the
  // figure that counts is taken after 12 s; the one after 1 s is shown too.
  const idle = await startServer('mockapi idle', [CLI, 'serve', '-c', files.one, '--port', '0', '--no-state', '--log', 'off']);
  await fetchText(`${idle.url}/mock/users/1`, AUTH);
  await sleep(1000);
  const startedMb = rssMb(idle.pid);
  await sleep(11_000);
  const idleMb = rssMb(idle.pid);
  await idle.stop();
  if (idleMb !== undefined) {
    record('RSS just started (1 s)', fmtMb(startedMb));
    record('RSS idle (12 s, serve, watching)', fmtMb(idleMb), { value: idleMb, max: 60, unit: ' MB' });
  }

  // Soak: default logging (pretty) to a file, load for soakS seconds, RSS sampled every second.
  const logFile = join(dir, 'out', 'soak.log');
  const fd = openSync(logFile, 'w');
  const port = await freePort();
  const server = await startServer('mockapi soak', [CLI, 'serve', '-c', files.one, '--port', String(port), '--no-state'], { stdout: fd, port });
  closeSync(fd);
  const stop = sampleRss(server.pid);
  const result = await runLoad({
    tool: opts.tool,
    url: `${server.url}/mock/users/42`,
    headers: AUTH,
    durationS: opts.soakS,
    connections: opts.connections,
    pinCore: CLIENT_CORE,
  });
  const samples = stop();
  await server.stop();
  await rm(logFile, { force: true });
  if (samples.length < 4) return;
  // Early: after a sixth of the run (warm-up done); late: the last sixth.
  const sixth = Math.max(1, Math.floor(samples.length / 6));
  const early = median(samples.slice(sixth, 2 * sixth + 1));
  const late = median(samples.slice(-sixth));
  const peak = Math.max(...samples);
  record(`RSS over a ${opts.soakS} s soak (peak, --log pretty)`, fmtMb(peak), { value: peak, max: 120, unit: ' MB' }, `${fmtRps(result.rps)}; ${result.non2xx} non-2xx`);
  // The young generation keeps growing for the first seconds of load: a short soak cannot tell
  // that from a leak, so below 30 s the growth is shown without a verdict.
  const judged = opts.soakS >= 30 ? { ratio: late / early, max: 1.1 } : undefined;
  record('RSS growth over the soak (late / early)', `${fmtMb(early)} → ${fmtMb(late)}`, judged, judged ? undefined : `${(late / early).toFixed(2)}×; too short a soak to judge (--soak 60)`);
}

// ---------------------------------------------------------------------------------------------

async function main() {
  const started = Date.now();
  const cpu = cpus()[0]?.model ?? 'unknown CPU';
  process.stderr.write(
    `mockapi bench: ${opts.tool}, ${opts.connections} connections, ${opts.rounds} rounds × ${opts.durationS} s, baseline ${BARE_LABEL}, ` +
      `${canPin ? 'servers on core 0, client on core 1' : 'not pinned'}; ${CORES} × ${cpu}, node ${process.version}\n` +
      `load average at start: ${readLoadAvg()}\n`,
  );
  const dir = await mkdtemp(join(tmpdir(), 'mockapi-bench-'));
  await mkdir(join(dir, 'out'));
  const files = { one: join(dir, 'one.yaml'), big: join(dir, 'big.yaml'), dynamic: join(dir, 'dynamic.yaml'), noJournal: join(dir, 'no-journal.yaml'), root: join(dir, 'root.yaml') };
  await writeFile(files.one, oneEndpointYaml());
  await writeFile(files.dynamic, dynamicYaml());
  await writeFile(files.root, oneEndpointYaml().replace('apiKey:', 'server:\n  basePath: /\napiKey:'));
  // The same config with the request journal off (SPEC §8: `server.journal: 0`); `one` keeps the default 1000.
  await writeFile(files.noJournal, oneEndpointYaml().replace('apiKey:', 'server:\n  journal: 0\napiKey:'));
  await writeFile(files.big, manyEndpointsYaml());
  files.keyed = join(dir, 'keyed.yaml');
  await writeFile(files.keyed, keyedYaml());
  // Without limits: `serve --workers` needs no store then, and is read against a bare cluster that has none.
  files.noLimits = join(dir, 'no-limits.yaml');
  await writeFile(files.noLimits, oneEndpointYaml().replace(/^limits:\n(?: .*\n)*/m, ''));
  let redis;
  try {
    if (selected.has('store') && spawnSync('redis-server', ['--version']).status === 0) {
      redis = await startRedis(dir);
      files.store = redis.url;
    }
    if (['throughput', 'logging', 'endpoints', 'stubs', 'keys', 'logbeside', 'store'].some((name) => selected.has(name))) await throughputScenarios(dir, files);
    if (redis !== undefined) await storeCurveScenario(files, redis);
    if (selected.has('workers')) await workersScenario(files);
    if (selected.has('endpoints')) await endpointTimings(dir, files);
    if (selected.has('dynamic')) await dynamicScenarios(dir, files);
    if (selected.has('coldstart')) await coldStart(files);
    if (selected.has('memory')) await memory(dir, files);
  } finally {
    redis?.child.kill('SIGKILL');
    await Promise.all([...children].map((child) => child.kill('SIGKILL')));
    await rm(dir, { recursive: true, force: true });
  }
  printTable();
  process.stdout.write(`\nload average at end: ${readLoadAvg()}; took ${Math.round((Date.now() - started) / 1000)} s\n`);
  if (flags.json !== undefined) {
    await writeFile(flags.json, `${JSON.stringify({ opts, tool: opts.tool, pinned: canPin, cpu, node: process.version, results }, null, 2)}\n`);
  }
  process.exitCode = results.some((r) => r.verdict === 'FAIL') ? 1 : 0;
}

/** A redis-server of the bench's own on a unix socket in `dir`, on the server core, nothing persisted. */
async function startRedis(dir) {
  const socket = join(dir, 'redis.sock');
  const [cmd, argv] = SERVER_CORE === undefined ? ['redis-server', []] : ['taskset', ['-c', SERVER_CORE, 'redis-server']];
  const child = spawn(cmd, [...argv, '--port', '0', '--unixsocket', socket, '--save', '', '--appendonly', 'no', '--dir', dir], { stdio: ['ignore', 'pipe', 'pipe'] });
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

function readLoadAvg() {
  try {
    return readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' ');
  } catch {
    return 'n/a';
  }
}

for (const signal of ['SIGINT', 'SIGTERM']) {
  process.once(signal, () => {
    for (const child of children) child.kill('SIGKILL');
    process.exit(130);
  });
}

main().catch((err) => {
  for (const child of children) child.kill('SIGKILL');
  process.stderr.write(`bench: ${err.stack ?? err}\n`);
  process.exit(2);
});
