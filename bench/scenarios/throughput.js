// Throughput figures: mockapi against bare node:http in the same interleaved rounds (journal on and
// off, logging, 10k endpoints, run-time stubs, keys, the shared store) and the store's load curve.
import { openSync, closeSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import { join } from 'node:path';
import { BIG_TARGET, BODY_TEXT } from '../configs.js';
import { runLoad } from '../load.js';
import { storeCurve } from '../store-curve.js';
import {
  CLI,
  BARE,
  WIDE,
  STUB_COUNT,
  flags,
  opts,
  BARE_ENV,
  BARE_LABEL,
  selected,
  CORES,
  SERVER_CORE,
  CLIENT_CORE,
  progress,
  AUTH,
  KEYED_AUTHS,
} from '../lib/options.js';
import { startServer, fetchText, addStubs, freePort, sampleRss, median } from '../lib/processes.js';
import { record, fmtRps, fmtMs, fmtMb } from '../lib/report.js';

export async function throughputScenarios(dir, files) {
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
  if (selected.has('throughput'))
    servers.push({
      key: 'noJournal',
      label: 'mockapi --log off, server.journal: 0',
      args: serveArgs(files.noJournal, 'off'),
    });
  if (flags.compare !== undefined) {
    const compareArgs = [flags.compare, ...serveArgs(files.one, 'off').slice(1)];
    servers.push({ key: 'cmp', label: 'compare build --log off', args: compareArgs });
    if (selected.has('logging'))
      servers.push({
        key: 'cmpPretty',
        label: 'compare build --log pretty',
        args: [flags.compare, ...serveArgs(files.one, 'pretty').slice(1)],
        logFile: join(dir, 'out', 'compare.log'),
      });
  }
  if (selected.has('logging'))
    servers.push({ key: 'pretty', label: 'mockapi --log pretty', args: serveArgs(files.one, 'pretty'), logFile });
  if (selected.has('logbeside'))
    servers.push({
      key: 'beside',
      label: 'mockapi --log pretty, log beside config',
      args: serveArgs(files.one, 'pretty'),
      logFile: join(dir, 'beside.log'),
    });
  if (selected.has('endpoints'))
    servers.push({ key: 'big', label: 'mockapi 10k endpoints', args: serveArgs(files.big, 'off') });
  if (selected.has('stubs'))
    servers.push({
      key: 'stubs',
      label: `mockapi ${STUB_COUNT} stubs`,
      args: serveArgs(files.one, 'off'),
      stubs: true,
    });
  if (selected.has('keys'))
    servers.push({
      key: 'keys',
      label: 'mockapi 10 keys + endpoint limit',
      args: serveArgs(files.keyed, 'off'),
      auth: KEYED_AUTHS[0],
      rotate: KEYED_AUTHS,
    });
  if (selected.has('throughput')) {
    // p99 under many connections (WIDE): bare and mockapi again, and a bare server that writes its
    // answers together at the end of the loop turn as mockapi does (src/http/write-batch.ts), to
    // tell the batching's own effect on the tail from the rest of the pipeline's.
    servers.push({ key: 'bareWide', label: `${BARE_LABEL}, ${WIDE} connections`, same: 'bare', connections: WIDE });
    servers.push({
      key: 'coalescedWide',
      label: `bare node:http (coalesced), ${WIDE} connections`,
      args: [BARE],
      env: { ...BARE_ENV, BENCH_COALESCE: '1' },
      connections: WIDE,
    });
    servers.push({ key: 'offWide', label: `mockapi --log off, ${WIDE} connections`, same: 'off', connections: WIDE });
  }
  if (wantStore)
    servers.push({
      key: 'store',
      label: 'mockapi --store (Redis)',
      args: [...serveArgs(files.one, 'off'), ...storeArgs],
    });
  if (wantStore && flags.compare !== undefined)
    servers.push({
      key: 'cmpStore',
      label: 'compare build --store (Redis)',
      args: [flags.compare, ...serveArgs(files.one, 'off').slice(1), ...storeArgs],
    });

  const one = '/mock/users/42';
  const paths = {
    bareWide: one,
    coalescedWide: one,
    offWide: one,
    bare: one,
    off: one,
    noJournal: one,
    pretty: one,
    beside: one,
    cmp: one,
    cmpPretty: one,
    store: one,
    cmpStore: one,
    stubs: one,
    keys: one,
    big: `/mock/r${BIG_TARGET}/items/42`,
  };
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
      if (check.status !== 200 || check.body !== BODY_TEXT)
        throw new Error(`${server.label}: unexpected answer ${check.status} ${check.body}`);
    }
  }

  const load = (server, durationS) =>
    runLoad({
      tool: opts.tool,
      url: `${server.handle.url}${paths[server.key]}`,
      headers:
        server.key === 'bare' || server.same === 'bare' || server.key === 'coalescedWide' ? {} : (server.auth ?? AUTH),
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
    return {
      rps: median(list.map((r) => r.rps)),
      p99: median(list.map((r) => r.p99)),
      bad,
      all: list.map((r) => Math.round(r.rps)).join(' / '),
    };
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
    record(
      'full pipeline, --log off (journal on, 1000)',
      fmtRps(off.rps),
      { ratio: vsBare.ratio, min: 0.85, invalid: off.bad > 0 },
      invalidNote(off) ?? `rounds: ${off.all}; ratio per round: ${vsBare.each}`,
    );
    const noJournal = summary('noJournal');
    const noJournalVsBare = paired('noJournal', 'bare');
    record(
      'full pipeline, --log off, server.journal: 0',
      fmtRps(noJournal.rps),
      { ratio: noJournalVsBare.ratio, min: 0.85, invalid: noJournal.bad > 0 },
      invalidNote(noJournal) ?? `rounds: ${noJournal.all}; ratio per round: ${noJournalVsBare.each}`,
    );
    record('p99 latency bare', fmtMs(bare.p99));
    const p99 = paired('off', 'bare', 'p99');
    const p50 = paired('off', 'bare', 'p50');
    const p90 = paired('off', 'bare', 'p90');
    record(
      'p99 latency full pipeline',
      fmtMs(off.p99),
      { ratio: p99.ratio, max: 1.5 },
      `ratio per round: ${p99.each}; p50 ${p50.ratio.toFixed(2)}×, p90 ${p90.ratio.toFixed(2)}× bare`,
    );
    const wideBare = summary('bareWide');
    const wide = summary('offWide');
    const wideP99 = paired('offWide', 'bareWide', 'p99');
    const coalescedP99 = paired('coalescedWide', 'bareWide', 'p99');
    record(
      `p99 latency bare, ${WIDE} connections`,
      fmtMs(wideBare.p99),
      undefined,
      `${fmtRps(wideBare.rps)}; a bare server writing as mockapi does (answers of a loop turn together): p99 ${coalescedP99.ratio.toFixed(2)}× (per round ${coalescedP99.each})`,
    );
    record(
      `p99 latency full pipeline, ${WIDE} connections`,
      fmtMs(wide.p99),
      { ratio: wideP99.ratio, max: 1.5, invalid: wide.bad > 0 },
      invalidNote(wide) ??
        `ratio per round: ${wideP99.each}; p50 ${paired('offWide', 'bareWide', 'p50').ratio.toFixed(2)}×, ${paired('offWide', 'bareWide').ratio.toFixed(2)}× bare's req/s`,
    );
    record('RSS under load (peak, --log off)', fmtMb(peakRss.off), { value: peakRss.off, max: 120, unit: ' MB' });
  }
  if (selected.has('logging')) {
    const pretty = summary('pretty');
    const vsBare = paired('pretty', 'bare');
    record(
      '--log pretty (stdout to a file)',
      fmtRps(pretty.rps),
      { ratio: vsBare.ratio, min: 0.6, invalid: pretty.bad > 0 },
      invalidNote(pretty) ?? `rounds: ${pretty.all}; ratio per round: ${vsBare.each}`,
    );
  }
  if (selected.has('logbeside')) {
    const beside = summary('beside');
    record(
      '--log pretty, log file in the config folder',
      fmtRps(beside.rps),
      undefined,
      `${paired('beside', 'bare').ratio.toFixed(2)}× bare; rounds: ${beside.all}`,
    );
  }
  if (flags.compare !== undefined && bare !== undefined) {
    const cmp = summary('cmp');
    record(
      'compare build, --log off',
      fmtRps(cmp.rps),
      undefined,
      `${paired('cmp', 'bare').ratio.toFixed(2)}× bare, p99 ${fmtMs(cmp.p99)}; rounds: ${cmp.all}`,
    );
    if (selected.has('logging')) {
      const cmpPretty = summary('cmpPretty');
      record(
        'compare build, --log pretty',
        fmtRps(cmpPretty.rps),
        undefined,
        `${paired('cmpPretty', 'bare').ratio.toFixed(2)}× bare; rounds: ${cmpPretty.all}`,
      );
    }
  }
  if (wantStore) {
    const store = summary('store');
    const vsBare = paired('store', 'bare');
    record(
      'shared store (Redis), --log off',
      fmtRps(store.rps),
      { ratio: vsBare.ratio, min: 0.5, invalid: store.bad > 0 },
      invalidNote(store) ??
        `rounds: ${store.all}; ratio per round: ${vsBare.each}; ${paired('store', 'off').ratio.toFixed(2)}× one in-process mockapi`,
    );
    if (flags.compare !== undefined) {
      const cmpStore = summary('cmpStore');
      record(
        'compare build, shared store (Redis)',
        fmtRps(cmpStore.rps),
        undefined,
        `${paired('cmpStore', 'bare').ratio.toFixed(2)}× bare; this build ${paired('store', 'cmpStore').ratio.toFixed(2)}× it; rounds: ${cmpStore.all}`,
      );
    }
  }
  if (!wantStore && selected.has('store'))
    record('shared store and --workers with it', 'skipped', undefined, 'redis-server is not installed');
  if (selected.has('keys')) {
    const keyed = summary('keys');
    const vsBare = paired('keys', 'bare');
    record(
      '10 keys of keys: on a plan (requests round them), an endpoint limit, --log off',
      fmtRps(keyed.rps),
      { ratio: vsBare.ratio, min: 0.85, invalid: keyed.bad > 0 },
      invalidNote(keyed) ??
        `vs bare; rounds: ${keyed.all}; ratio per round: ${vsBare.each}; ${paired('keys', 'off').ratio.toFixed(2)}× mockapi with one key and no endpoint limit`,
    );
  }
  if (selected.has('stubs')) {
    const stubbed = summary('stubs');
    const vsNone = paired('stubs', 'off');
    record(
      `a config endpoint with ${STUB_COUNT.toLocaleString('en-US')} stubs present`,
      fmtRps(stubbed.rps),
      { ratio: vsNone.ratio, min: 0.9, invalid: stubbed.bad > 0 },
      invalidNote(stubbed) ?? `vs no stubs; rounds: ${stubbed.all}; ratio per round: ${vsNone.each}`,
    );
  }
  if (selected.has('endpoints')) {
    const big = summary('big');
    const vsOne = paired('big', 'off');
    record(
      '10,000 endpoints, --log off',
      fmtRps(big.rps),
      { ratio: vsOne.ratio, min: 0.9, invalid: big.bad > 0 },
      invalidNote(big) ?? `vs 1 endpoint; rounds: ${big.all}; ratio per round: ${vsOne.each}`,
    );
  }
}

/** `serve --workers n --store` for n = 1, 2 (4, 8) against one process with the store: see bench/store-curve.js. */
export async function storeCurveScenario(files, redis) {
  const path = '/mock/users/42';
  await storeCurve({
    serveArgs: [CLI, 'serve', '-c', files.one, '--port', '0', '--no-state', '--log', 'off', '--store', files.store],
    redisPid: redis.child.pid,
    cores: CORES,
    clientCore: CLIENT_CORE,
    serverCore: SERVER_CORE,
    opts,
    startServer,
    load: (server, durationS) =>
      runLoad({
        tool: opts.tool,
        url: `${server.handle.url}${path}`,
        headers: AUTH,
        durationS,
        connections: opts.connections,
        pinCore: CLIENT_CORE,
      }),
    async check(server) {
      const answer = await fetchText(`${server.handle.url}${path}`, AUTH);
      if (answer.status !== 200 || answer.body !== BODY_TEXT)
        throw new Error(`${server.label}: unexpected answer ${answer.status} ${answer.body}`);
    },
    record,
    progress,
    median,
    fmtRps,
  });
}
