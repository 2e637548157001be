// Big configs (load, compile, reload of 10k endpoints), cold start and the memory soak.
import { createHash } from 'node:crypto';
import { openSync, closeSync, readFileSync } from 'node:fs';
import { rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { runLoad } from '../load.js';
import { CLI, BARE, CONFIG_TIMING, opts, BARE_ENV, CLIENT_CORE, AUTH } from '../lib/options.js';
import { startServer, fetchText, freePort, rssMb, sampleRss, runNode, sleep, median } from '../lib/processes.js';
import { record, fmtRps, fmtMs, fmtMb } from '../lib/report.js';

export async function endpointTimings(dir, files) {
  // Load + validate (and compile) in a fresh process, median of 3.
  const loads = [];
  for (let i = 0; i < 3; i++) loads.push(JSON.parse(runNode([CONFIG_TIMING, 'load', files.big])));
  const loadMs = median(loads.map((l) => l.loadMs));
  const compileMs = median(loads.map((l) => l.compileMs));
  record(
    '10k endpoints: load + validate',
    fmtMs(loadMs),
    { value: loadMs / 1000, max: 1, unit: ' s' },
    `fresh process, loadConfig(); compile ${fmtMs(compileMs)} more`,
  );

  // Hot reload through the CLI's watcher: write the file, poll health until it shows the new revision.
  const spawned = performance.now();
  const server = await startServer('mockapi 10k (watch)', [
    CLI,
    'serve',
    '-c',
    files.big,
    '--port',
    '0',
    '--no-state',
    '--log',
    'off',
  ]);
  record(
    '10k endpoints: serve start → ready line',
    fmtMs(performance.now() - spawned),
    undefined,
    'watching on (default)',
  );
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
  record(
    '10k endpoints: hot reload (file write → health)',
    fmtMs(watchMs),
    { value: watchMs / 1000, max: 0.5, unit: ' s' },
    `CLI watcher, 50 ms debounce included; runs: ${times.map(fmtMs).join(' / ')}`,
  );

  const inproc = JSON.parse(runNode([CONFIG_TIMING, 'reload', files.big, '3']));
  const inprocMs = median(inproc.reloadMs);
  record(
    '10k endpoints: reload() in-process',
    fmtMs(inprocMs),
    undefined,
    `startMockServer().reload(), no watcher (the target is the hot reload's above); runs: ${inproc.reloadMs.map(fmtMs).join(' / ')}`,
  );
  // Where a reload's time goes, step by step (one endpoint-free change: the project line).
  const { phases } = JSON.parse(runNode([CONFIG_TIMING, 'phases', files.big, '5']));
  const total = Object.values(phases).reduce((a, b) => a + b, 0);
  const steps = Object.entries(phases).map(([step, ms]) => `${step} ${fmtMs(ms)} (${Math.round((ms / total) * 100)}%)`);
  record(
    '10k endpoints: a reload step by step',
    fmtMs(total),
    undefined,
    `median of 5: ${steps.join(', ')}; the CLI's hot reload adds the watcher's 50 ms debounce, the file read and the health poll`,
  );
}

export async function coldStart(files) {
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
    {
      key: 'noWatch',
      args: [CLI, 'serve', '-c', files.one, '--port', '0', '--no-state', '--log', 'off', '--no-watch'],
    },
  ];
  const times = { bare: [], serve: [], noWatch: [] };
  for (let i = 0; i < opts.coldRuns; i++)
    for (const v of variants) times[v.key].push(await timeToHealth(v.args, v.env));
  const bare = median(times.bare);
  const serve = median(times.serve);
  const noWatch = median(times.noWatch);
  record('cold start bare node (spawn → 200)', fmtMs(bare), undefined, `median of ${opts.coldRuns}`);
  record(
    'cold start mockapi serve (spawn → health 200)',
    fmtMs(serve),
    { ratio: serve / bare, max: 1.5 },
    `watching on (default); median of ${opts.coldRuns}`,
  );
  record('cold start mockapi serve --no-watch', fmtMs(noWatch), { ratio: noWatch / bare, max: 1.5 });
}

export async function memory(dir, files) {
  // Idle: the default serve (watching on) after one request, then left alone. V8 gives back the
  // young generation it grew while loading the config only after several idle seconds, so the
  // figure that counts is taken after 12 s; the one after 1 s is shown too.
  const idle = await startServer('mockapi idle', [
    CLI,
    'serve',
    '-c',
    files.one,
    '--port',
    '0',
    '--no-state',
    '--log',
    'off',
  ]);
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
  const server = await startServer(
    'mockapi soak',
    [CLI, 'serve', '-c', files.one, '--port', String(port), '--no-state'],
    { stdout: fd, port },
  );
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
  record(
    `RSS over a ${opts.soakS} s soak (peak, --log pretty)`,
    fmtMb(peak),
    { value: peak, max: 120, unit: ' MB' },
    `${fmtRps(result.rps)}; ${result.non2xx} non-2xx`,
  );
  // The young generation keeps growing for the first seconds of load: a short soak cannot tell
  // that from a leak, so below 30 s the growth is shown without a verdict.
  const judged = opts.soakS >= 30 ? { ratio: late / early, max: 1.1 } : undefined;
  record(
    'RSS growth over the soak (late / early)',
    `${fmtMb(early)} → ${fmtMb(late)}`,
    judged,
    judged ? undefined : `${(late / early).toFixed(2)}×; too short a soak to judge (--soak 60)`,
  );
}
