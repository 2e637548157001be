// `serve --workers n` against a bare node:http cluster of n (bench/run.js --only workers).
import { availableParallelism } from 'node:os';
import { BODY_TEXT } from '../configs.js';
import { runLoad } from '../load.js';
import { CLI, BARE, BARE_ENV, flags, opts, CORES, SERVER_CORE, CLIENT_CORE, progress, AUTH } from '../lib/options.js';
import { startServer, fetchText, rssMb, sampleRss, median } from '../lib/processes.js';
import { record, fmtRps, fmtMs, fmtMb } from '../lib/report.js';

/**
 * `serve --workers n` (SPEC §12: workers scale like node:cluster): each n against a bare node:http
 * cluster of n processes in the same interleaved rounds, and `--workers 1` against one mockapi
 * process; after each measured load (a burst of `--duration` s), the delay of the first answer on a
 * new connection; and the primary's peak RSS over all its loads, above its RSS at rest. n is 1 and
 * 2, and 4 and 8 where there are cores for them beside the load generator's. Config without limits
 * (no store: the bare cluster has none either), --log off, journal on (1000).
 */
export async function workersScenario(files) {
  // On a machine of 12 cores or more the load generator gets the last 4 (wrk, a thread each), so
  // that it is not what 4 and 8 workers wait on; the servers get the rest. Below that: the client
  // on core 1 (one wrk thread), the servers on every other core (on two cores: core 0).
  const wideClient = CLIENT_CORE !== undefined && CORES >= 12;
  const clientCores = wideClient ? `${CORES - 4}-${CORES - 1}` : CLIENT_CORE;
  const clientThreads = wideClient ? 4 : 1;
  const serverCores =
    CLIENT_CORE === undefined
      ? undefined
      : wideClient
        ? `0-${CORES - 5}`
        : CORES >= 3
          ? `0,2-${CORES - 1}`
          : SERVER_CORE;
  const serverCoreCount =
    CLIENT_CORE === undefined ? availableParallelism() - 1 : wideClient ? CORES - 4 : Math.max(1, CORES - 1);
  const sizes = [1, 2, 4, 8].filter((n) => n <= 2 || n <= serverCoreCount);
  const start = (label, args, env = {}) =>
    serverCores === undefined
      ? startServer(label, args, { env, command: process.execPath })
      : startServer(label, ['-c', serverCores, process.execPath, ...args], { env, command: 'taskset' });
  const path = '/mock/users/42';
  const load = (server, durationS) =>
    runLoad({
      tool: opts.tool,
      url: `${server.handle.url}${path}`,
      headers: server.bare ? {} : AUTH,
      durationS,
      connections: opts.connections,
      pinCore: clientCores,
      threads: clientThreads,
    });
  const serve = [CLI, 'serve', '-c', files.noLimits, '--port', '0', '--no-state', '--log', 'off'];
  const one = { key: 'one', label: 'one mockapi process', args: serve };
  one.handle = await start(one.label, one.args);
  for (const n of sizes) {
    const servers = [
      ...(n === 1 ? [one] : []),
      ...(flags.compare === undefined
        ? []
        : [
            {
              key: 'cmp',
              label: `compare build --workers ${n}`,
              args: [flags.compare, ...serve.slice(1), '--workers', String(n)],
            },
          ]),
      {
        key: 'bare',
        label: `bare node:http cluster of ${n}`,
        args: [BARE],
        env: { ...BARE_ENV, BENCH_WORKERS: String(n) },
        bare: true,
      },
      { key: 'workers', label: `mockapi --workers ${n}`, args: [...serve, '--workers', String(n)] },
    ];
    for (const server of servers) {
      server.handle ??= await start(server.label, server.args, server.env);
      const check = await fetchText(`${server.handle.url}${path}`, server.bare ? {} : AUTH);
      if (check.status !== 200 || check.body !== BODY_TEXT)
        throw new Error(`${server.label}: unexpected answer ${check.status} ${check.body}`);
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
        progress(
          `--workers ${n} round ${round}/${opts.rounds} ${server.label}: ${fmtRps(result.rps)}` +
            (result.non2xx + result.errors > 0 ? `, ${result.non2xx} non-2xx, ${result.errors} errors` : ''),
        );
      }
    }
    for (const server of servers) if (server !== one) await server.handle.stop();
    const bad = (key) => runs[key].reduce((sum, r) => sum + r.non2xx + r.errors, 0);
    const rps = (key) => median(runs[key].map((r) => r.rps));
    const ratio = (key, base) => median(runs[key].map((r, i) => r.rps / runs[base][i].rps));
    const rounds = (key) => runs[key].map((r) => Math.round(r.rps)).join(' / ');
    const invalid = bad('workers') + bad('bare') > 0;
    const badNote = invalid
      ? `${bad('workers')} + ${bad('bare')} non-2xx answers or socket errors: figure not valid; `
      : '';
    const where =
      serverCores === undefined
        ? 'not pinned'
        : `servers on core${serverCores.length > 1 ? 's' : ''} ${serverCores}, wrk (${clientThreads} thread${clientThreads > 1 ? 's' : ''}) on ${clientCores}`;
    if (n === 1) {
      record(
        `--workers 1 vs one mockapi process`,
        fmtRps(rps('workers')),
        { ratio: ratio('workers', 'one'), min: 0.85, invalid: invalid || bad('one') > 0 },
        `${badNote}one process: ${fmtRps(rps('one'))} (rounds: ${rounds('one')}); --workers 1 rounds: ${rounds('workers')}`,
      );
    }
    record(
      `--workers ${n} vs bare node:http cluster of ${n}`,
      fmtRps(rps('workers')),
      { ratio: ratio('workers', 'bare'), min: 0.75, invalid },
      `${badNote}bare cluster: ${fmtRps(rps('bare'))} (rounds: ${rounds('bare')}); --workers rounds: ${rounds('workers')}; ${where}`,
    );
    record(
      `--workers ${n}: first answer after a ${opts.durationS} s burst (worst)`,
      fmtMs(Math.max(...firstAnswers)),
      { value: Math.max(...firstAnswers), max: 100, unit: ' ms' },
      `each round: ${firstAnswers.map(fmtMs).join(' / ')}`,
    );
    if (flags.compare !== undefined) {
      record(
        `compare build --workers ${n}`,
        fmtRps(rps('cmp')),
        undefined,
        `${ratio('cmp', 'bare').toFixed(2)}× bare cluster; first answer after a burst (worst) ${fmtMs(Math.max(...cmpFirstAnswers))}; rounds: ${rounds('cmp')}`,
      );
    }
    record(
      `--workers ${n}: primary RSS, peak above rest`,
      `+${fmtMb(peakRss - restRss)}`,
      { value: peakRss - restRss, max: 100, unit: ' MB' },
      `at rest ${fmtMb(restRss)}, peak ${fmtMb(peakRss)}`,
    );
  }
  await one.handle.stop();
}
