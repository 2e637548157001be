// A fleet (serve --fleet): the full pipeline with the journal shared through Redis against the same
// host without a fleet, in interleaved rounds (also with a request id that changes on every request);
// how soon a wait on host B wakes after host A answered
// (the distribution, idle and with A under load); and the throughput of 1, 2 and 4 hosts.
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { API_KEY, BODY_TEXT, oneEndpointYaml } from '../configs.js';
import { runLoad } from '../load.js';
import { CLI, opts, CORES, CLIENT_CORE, progress, AUTH } from '../lib/options.js';
import { startServer, fetchText, median, sleep } from '../lib/processes.js';
import { record, fmtRps, fmtMs } from '../lib/report.js';

const PATH = '/mock/users/42';

/** One endpoint, with the bench's limits (shared through Redis in a fleet) or without limits. */
function yaml(project, limits) {
  const text = oneEndpointYaml().replace('project: bench', `project: ${project}`);
  return limits ? text : text.replace(/^limits:\n(?: .*\n)*/m, '');
}

export async function fleetScenarios(dir, redisUrl) {
  const files = {
    limited: join(dir, 'fleet-limited.yaml'),
    open: join(dir, 'fleet-open.yaml'),
    wake: join(dir, 'fleet-wake.yaml'),
    curve: join(dir, 'fleet-curve.yaml'),
  };
  await writeFile(files.limited, yaml('bench-fleet', true));
  await writeFile(files.open, yaml('bench-fleet-open', false));
  await writeFile(files.wake, yaml('bench-fleet-wake', false));
  await writeFile(files.curve, yaml('bench-fleet-curve', false));
  const serve = (file, ...extra) => [
    CLI,
    'serve',
    '-c',
    file,
    '--port',
    '0',
    '--no-state',
    '--log',
    'off',
    '--no-watch',
    ...extra,
  ];
  await pipelineFigures(files, serve, redisUrl);
  await wakeFigures(files, serve, redisUrl);
  await curveFigures(files, serve, redisUrl);
}

/** The full pipeline with the shared journal vs the same host without a fleet, paired round by round. */
async function pipelineFigures(files, serve, redisUrl) {
  const servers = [
    { key: 'alone', label: 'one host, limits in the process', args: serve(files.limited) },
    { key: 'store', label: 'one host, --store (limits in Redis)', args: serve(files.limited, '--store', redisUrl) },
    {
      key: 'fleet',
      label: 'one host, --fleet (limits and journal in Redis)',
      args: serve(files.limited, '--fleet', redisUrl),
    },
    { key: 'aloneOpen', label: 'one host, no limits', args: serve(files.open) },
    {
      key: 'fleetOpen',
      label: 'one host, no limits, --fleet (journal in Redis)',
      args: serve(files.open, '--fleet', redisUrl),
    },
  ];
  for (const server of servers) {
    server.handle = await startServer(server.label, server.args);
    const check = await fetchText(`${server.handle.url}${PATH}`, AUTH);
    if (check.status !== 200 || check.body !== BODY_TEXT)
      throw new Error(`${server.label}: unexpected answer ${check.status} ${check.body}`);
  }
  const load = (server, durationS) =>
    runLoad({
      tool: opts.tool,
      url: `${server.handle.url}${PATH}`,
      headers: AUTH,
      durationS,
      connections: opts.connections,
      pinCore: CLIENT_CORE,
      ...(server.headerSets === undefined ? {} : { headerSets: server.headerSets }),
    });
  // The same two servers without limits, loaded with a header whose value changes on every request
  // (a request id): a fleet host then writes each entry's request part in full (control/journal-text.ts).
  const changing = Array.from({ length: 1000 }, (_, i) => ({ 'x-request-id': `req_${String(i).padStart(8, '0')}` }));
  for (const key of ['aloneOpen', 'fleetOpen']) {
    const server = servers.find((s) => s.key === key);
    servers.push({
      ...server,
      key: `${key}Changing`,
      label: `${server.label}, a request id each request`,
      headerSets: changing,
    });
  }
  progress(`fleet: warm-up ${opts.warmupS} s each`);
  for (const server of servers) await load(server, opts.warmupS);
  const runs = Object.fromEntries(servers.map((s) => [s.key, []]));
  for (let round = 1; round <= opts.rounds; round++) {
    for (const server of round % 2 === 1 ? servers : [...servers].reverse()) {
      await load(server, opts.settleS);
      const result = await load(server, opts.durationS);
      runs[server.key].push(result);
      progress(
        `fleet round ${round}/${opts.rounds} ${server.label}: ${fmtRps(result.rps)}, p99 ${fmtMs(result.p99)}${result.non2xx + result.errors > 0 ? `, ${result.non2xx} non-2xx, ${result.errors} errors` : ''}`,
      );
    }
  }
  for (const server of servers) if (server.headerSets === undefined) await server.handle.stop();
  const paired = (key, base) => {
    const ratios = runs[key].map((r, i) => r.rps / runs[base][i].rps);
    return { ratio: median(ratios), each: ratios.map((x) => x.toFixed(2)).join(' / ') };
  };
  const rps = (key) => median(runs[key].map((r) => r.rps));
  const bad = (key) => runs[key].reduce((n, r) => n + r.non2xx + r.errors, 0);
  const vsStore = paired('fleet', 'store');
  const vsAlone = paired('fleet', 'alone');
  const open = paired('fleetOpen', 'aloneOpen');
  record(
    'fleet: full pipeline, journal shared (no limits), vs the same host without a fleet',
    fmtRps(rps('fleetOpen')),
    { ratio: open.ratio, min: 0.6, invalid: bad('fleetOpen') > 0 },
    `per round: ${open.each}; without a fleet ${fmtRps(rps('aloneOpen'))}`,
  );
  const changingOpen = paired('fleetOpenChanging', 'aloneOpenChanging');
  record(
    'fleet: the same, a request id that changes on every request (no limits), vs the same host without a fleet',
    fmtRps(rps('fleetOpenChanging')),
    undefined,
    `${changingOpen.ratio.toFixed(2)}×, per round: ${changingOpen.each}; without a fleet ${fmtRps(rps('aloneOpenChanging'))} (each entry's request part written in full)${bad('fleetOpenChanging') > 0 ? `; ${bad('fleetOpenChanging')} non-2xx or errors` : ''}`,
  );
  record(
    'fleet: full pipeline, journal and limits shared, vs the same host with limits through --store',
    fmtRps(rps('fleet')),
    { ratio: vsStore.ratio, min: 0.6, invalid: bad('fleet') > 0 },
    `per round: ${vsStore.each}; --store ${fmtRps(rps('store'))}`,
  );
  record(
    'fleet: full pipeline, journal and limits shared, vs the same host with limits in the process',
    fmtRps(rps('fleet')),
    undefined,
    `${vsAlone.ratio.toFixed(2)}×, per round: ${vsAlone.each} (the limits' round trip to Redis is in this one: see the store figures); alone ${fmtRps(rps('alone'))}`,
  );
}

/** Percentiles of a list of milliseconds. */
function spread(values) {
  const sorted = [...values].sort((a, b) => a - b);
  const at = (q) => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))];
  return { p50: at(0.5), p90: at(0.9), p99: at(0.99), max: sorted[sorted.length - 1] };
}

/**
 * A wait on B for the next request, then one request to A: how long after A's answer reached the
 * client B's wait answered. The wait is given 20 ms to start listening first (a bench may sleep).
 */
async function wakeSamples(a, b, count, tag, from) {
  const samples = [];
  let since = from.since;
  for (let i = 0; i < count; i++) {
    const waiting = fetch(`${b.url}/__mockapi/requests/wait?path=${PATH}&since=${since}&timeout=10s`).then(
      async (res) => ({ at: performance.now(), body: await res.json() }),
    );
    await sleep(20);
    const answered = await fetch(`${a.url}${PATH}?${tag}=${i}`, { headers: { 'x-api-key': API_KEY } });
    await answered.arrayBuffer();
    const at = performance.now();
    const woke = await waiting;
    const entry = woke.body.requests?.find((e) => e.query?.[tag] === String(i));
    if (entry === undefined)
      throw new Error(`the wait on B answered without A's request: ${JSON.stringify(woke.body).slice(0, 300)}`);
    since = Math.max(since, ...woke.body.requests.map((e) => e.id));
    samples.push(Math.max(0, woke.at - at));
  }
  from.since = since;
  return spread(samples);
}

async function wakeFigures(files, serve, redisUrl) {
  const [a, b] = await Promise.all([
    startServer('fleet host A', serve(files.wake, '--fleet', redisUrl)),
    startServer('fleet host B', serve(files.wake, '--fleet', redisUrl)),
  ]);
  const count = opts.durationS < 8 ? 100 : 300;
  const from = { since: 0 };
  const idle = await wakeSamples(a, b, count, 'idle', from);
  record(
    'fleet: a wait on host B wakes after host A answered (idle), p99',
    fmtMs(idle.p99),
    { value: idle.p99, max: 50, unit: ' ms' },
    `${count} waits: p50 ${fmtMs(idle.p50)}, p90 ${fmtMs(idle.p90)}, p99 ${fmtMs(idle.p99)}, max ${fmtMs(idle.max)}`,
  );
  // Again while A answers a full load of other requests.
  let loading = true;
  const background = (async () => {
    while (loading)
      await runLoad({
        tool: opts.tool,
        url: `${a.url}/mock/users/7`,
        headers: AUTH,
        durationS: 2,
        connections: opts.connections,
        pinCore: CLIENT_CORE,
      });
  })();
  const busy = await wakeSamples(a, b, Math.round(count / 3), 'busy', from);
  loading = false;
  await background;
  // Information: here A and B share the server core, so a saturated A delays B's wake-up by the
  // scheduler's slices; hosts of a fleet on their own machines (or cores) do not.
  record(
    "fleet: a wait on host B wakes after host A answered (A saturated, on B's core), p99",
    fmtMs(busy.p99),
    undefined,
    `${Math.round(count / 3)} waits: p50 ${fmtMs(busy.p50)}, p90 ${fmtMs(busy.p90)}, p99 ${fmtMs(busy.p99)}, max ${fmtMs(busy.max)}${CORES <= 2 ? '; A and B share core 0, and A is saturated: B waits for the scheduler' : ''}`,
  );
  await Promise.all([a.stop(), b.stop()]);
}

/** 1, 2 and 4 hosts of one fleet, each loaded by its own share of the connections at once: their sum. */
async function curveFigures(files, serve, redisUrl) {
  const shown = [];
  for (const n of [1, 2, 4]) {
    // With more than two cores the hosts share every core but the client's (1); on two, core 0 (pinned).
    const command = CORES > 2 ? 'taskset' : undefined;
    const hostArgs = (args) => (command === undefined ? args : ['-c', `0,2-${CORES - 1}`, process.execPath, ...args]);
    const hosts = await Promise.all(
      Array.from({ length: n }, (_, i) =>
        startServer(
          `fleet host ${i + 1}/${n}`,
          hostArgs(serve(files.curve, '--fleet', redisUrl)),
          command === undefined ? {} : { command },
        ),
      ),
    );
    const connections = Math.max(1, Math.round(opts.connections / n));
    const loadAll = (durationS) =>
      Promise.all(
        hosts.map((h) =>
          runLoad({
            tool: opts.tool,
            url: `${h.url}${PATH}`,
            headers: AUTH,
            durationS,
            connections,
            pinCore: CLIENT_CORE,
          }),
        ),
      );
    await loadAll(opts.warmupS);
    const sums = [];
    for (let round = 0; round < Math.min(3, opts.rounds); round++) {
      const results = await loadAll(opts.durationS);
      sums.push(results.reduce((s, r) => s + r.rps, 0));
    }
    shown.push(`${n} host${n === 1 ? '' : 's'}: ${fmtRps(median(sums))}`);
    progress(`fleet curve: ${shown[shown.length - 1]}`);
    await Promise.all(hosts.map((h) => h.stop()));
  }
  record(
    'fleet: 1 / 2 / 4 hosts, all loaded at once (sum)',
    shown.join(', '),
    undefined,
    CORES > 2
      ? `${CORES} cores: hosts on every core but core 1, the client on core 1 (Redis unpinned)`
      : `${CORES} cores: every host on core 0, the client on core 1, Redis wherever it runs — this machine cannot show hosts scaling, only what sharing one Redis costs them`,
  );
}
