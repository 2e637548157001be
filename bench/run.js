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
//   node bench/run.js --only meters     two meters and a settle vs none, in one process and through Redis
//   node bench/run.js --only fleet     serve --fleet: the shared journal's cost, how soon a wait on another host wakes, 1/2/4 hosts
//   node bench/run.js --only verify    mockapi verify of 1,000 endpoints vs a plain HTTP client (bench/verify.js)
//   node bench/run.js --only openapi   import and start figures against the previous build (HEAD^ or the newest v* tag, built
//                                      by the bench in the temp directory; --previous <ref> names another, --compare <bin> takes one built)
//   node bench/run.js --help
import { spawnSync } from 'node:child_process';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir, cpus } from 'node:os';
import { join } from 'node:path';
import { dynamicYaml, keyedYaml, manyEndpointsYaml, oneEndpointYaml } from './configs.js';
import { flags, opts, BARE_LABEL, selected, CORES, canPin } from './lib/options.js';
import { children, startRedis, readLoadAvg } from './lib/processes.js';
import { results, printTable } from './lib/report.js';
import { throughputScenarios, storeCurveScenario } from './scenarios/throughput.js';
import { workersScenario } from './scenarios/workers.js';
import { dynamicScenarios } from './scenarios/dynamic.js';
import { endpointTimings, coldStart, memory } from './scenarios/startup.js';
import { resourcesScenario, resourcesWorkersScenario } from './scenarios/resources.js';
import { sessionsScenario } from './scenarios/sessions.js';
import { verifyScenario } from './scenarios/verify.js';
import { openapiScenarios } from './scenarios/openapi.js';
import { metersScenario } from './scenarios/meters.js';
import { metersExactScenario } from './scenarios/meters-exact.js';
import { fleetScenarios } from './scenarios/fleet.js';

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
  const files = {
    one: join(dir, 'one.yaml'),
    big: join(dir, 'big.yaml'),
    dynamic: join(dir, 'dynamic.yaml'),
    noJournal: join(dir, 'no-journal.yaml'),
    root: join(dir, 'root.yaml'),
  };
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
    if (
      (selected.has('store') || selected.has('meters') || selected.has('fleet')) &&
      spawnSync('redis-server', ['--version']).status === 0
    ) {
      redis = await startRedis(dir);
      files.store = redis.url;
    }
    if (
      ['throughput', 'logging', 'endpoints', 'stubs', 'keys', 'logbeside', 'store'].some((name) => selected.has(name))
    )
      await throughputScenarios(dir, files);
    if (redis !== undefined && selected.has('store')) await storeCurveScenario(files, redis);
    if (selected.has('meters')) await metersScenario(dir, redis?.url);
    if (selected.has('meters') && redis !== undefined) await metersExactScenario(dir, redis.url);
    if (selected.has('fleet')) {
      if (redis === undefined)
        (await import('./lib/report.js')).record('fleet', 'skipped', undefined, 'redis-server is not installed');
      else await fleetScenarios(dir, redis.url);
    }
    if (selected.has('workers')) await workersScenario(files);
    if (selected.has('endpoints')) await endpointTimings(dir, files);
    if (selected.has('dynamic')) await dynamicScenarios(dir, files);
    if (selected.has('resources')) await resourcesScenario(dir);
    if (selected.has('resources')) await resourcesWorkersScenario(dir);
    if (selected.has('sessions')) await sessionsScenario(dir);
    if (selected.has('coldstart')) await coldStart(files);
    if (selected.has('memory')) await memory(dir, files);
    if (selected.has('verify')) await verifyScenario();
    if (selected.has('openapi')) await openapiScenarios(dir);
  } finally {
    redis?.child.kill('SIGKILL');
    await Promise.all([...children].map((child) => child.kill('SIGKILL')));
    await rm(dir, { recursive: true, force: true });
  }
  printTable();
  process.stdout.write(
    `\nload average at end: ${readLoadAvg()}; took ${Math.round((Date.now() - started) / 1000)} s\n`,
  );
  if (flags.json !== undefined) {
    await writeFile(
      flags.json,
      `${JSON.stringify({ opts, tool: opts.tool, pinned: canPin, cpu, node: process.version, results }, null, 2)}\n`,
    );
  }
  process.exitCode = results.some((r) => r.verdict === 'FAIL') ? 1 : 0;
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
