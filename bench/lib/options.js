// The bench's options, paths and pinning (bench/run.js): parsed once, on import. With two cores or
// more the driver re-runs itself on core 1 (taskset) before anything else runs.
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { cpus } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { API_KEY, BODY_TEXT, KEYED_KEYS } from '../configs.js';
import { defaultTool } from '../load.js';

export const ROOT = fileURLToPath(new URL('../..', import.meta.url));
export const CLI = resolve(
  process.argv.includes('--cli') ? process.argv[process.argv.indexOf('--cli') + 1] : join(ROOT, 'bin', 'mockapi.js'),
);
// config-timing.js imports the dist/ beside the CLI measured.
export const DIST = join(dirname(CLI), '..', 'dist');
export const BARE = join(ROOT, 'bench', 'bare-server.js');
export const CONFIG_TIMING = join(ROOT, 'bench', 'config-timing.js');
export const SCENARIOS = [
  'throughput',
  'logging',
  'endpoints',
  'stubs',
  'keys',
  'dynamic',
  'resources',
  'sessions',
  'store',
  'meters',
  'fleet',
  'workers',
  'coldstart',
  'memory',
  'verify',
  'openapi',
];
// Keep-alive connections of the throughput scenario's p99 figure under many connections.
export const WIDE = 256;
// Run-time stubs present while a config endpoint is loaded (the `stubs` scenario).
export const STUB_COUNT = 1000;
// Not run by default: --log pretty with the log file in the config's own folder (see BENCHMARKS.md).
export const EXTRA_SCENARIOS = ['logbeside'];

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
  --previous <ref>      the openapi scenario's previous build, when --compare is not given: a
                        commit, branch or tag of this repository, unpacked and built in the temp
                        directory (kept for the next run); default the newest v* tag, else HEAD^;
                        \`none\` measures this build alone
`;

export const { values: flags } = parseArgs({
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
    previous: { type: 'string' },
    cli: { type: 'string' },
    help: { type: 'boolean', default: false },
  },
});
if (flags.help) {
  process.stdout.write(HELP);
  process.exit(0);
}

const quick = flags.quick;
export const opts = {
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
export const BARE_ENV = { BENCH_BODY: BODY_TEXT, BENCH_COALESCE: flags.baseline === 'coalesced' ? '1' : '0' };
export const BARE_LABEL = flags.baseline === 'coalesced' ? 'bare node:http (coalesced)' : 'bare node:http';
export const selected = new Set(flags.only === undefined ? SCENARIOS : flags.only.split(',').map((s) => s.trim()));
for (const name of selected) {
  if (!SCENARIOS.includes(name) && !EXTRA_SCENARIOS.includes(name))
    fail(`unknown scenario "${name}" (one of ${[...SCENARIOS, ...EXTRA_SCENARIOS].join(', ')})`);
}
for (const [name, value] of Object.entries(opts))
  if (typeof value === 'number' && !(value > 0)) fail(`--${name} must be a positive number`);

// Pinning: servers on core 0, the client on core 1. autocannon runs inside this process, so the
// driver re-runs itself on core 1; wrk is started on core 1 explicitly.
// cpus(), not availableParallelism(): the re-run driver is itself restricted to core 1.
export const CORES = cpus().length;
export const canPin = !flags['no-pin'] && CORES >= 2 && spawnSync('taskset', ['-V']).error === undefined;
if (canPin && process.env.MOCKAPI_BENCH_PINNED !== '1') {
  const child = spawnSync('taskset', ['-c', '1', process.execPath, ...process.argv.slice(1)], {
    stdio: 'inherit',
    env: { ...process.env, MOCKAPI_BENCH_PINNED: '1' },
  });
  process.exit(child.status ?? 1);
}
export const SERVER_CORE = canPin ? '0' : undefined;
export const CLIENT_CORE = canPin ? 1 : undefined;

if (!existsSync(join(DIST, 'cli', 'cli.js')))
  fail(`${DIST} is missing: run \`npm run build\` (or \`npm run bench\`, which builds)`);

export function fail(message) {
  process.stderr.write(`bench: ${message}\n`);
  process.exit(2);
}

export function progress(message) {
  process.stderr.write(`  ${message}\n`);
}

// ---------------------------------------------------------------------------------------------
// Configs

export const AUTH = { 'x-api-key': API_KEY };
// The `keys` scenario's requests go round the ten keys of `keys:` (see keyedYaml), one key a request.
export const KEYED_AUTHS = KEYED_KEYS.map((key) => ({ 'x-api-key': key }));
