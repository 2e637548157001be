// The `store` scenario's curve (issue 25): `serve --workers n --store` for n = 1, 2 (4 and 8 where
// the machine has the cores) against one mockapi process with the same store, in the same
// interleaved rounds, with the CPU each load took from Redis and from the servers' cores, so the
// output says what limits the curve: Redis (one thread, one core) or the cores the servers share.
import { readFileSync } from 'node:fs';

/** The CPU time (clock ticks) of a process, and of its children (a cluster's workers) with `children`. */
function processTicks(pid, children = false) {
  try {
    const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
    let ticks = Number(fields[11]) + Number(fields[12]); // utime, stime
    if (children) {
      const kids = readFileSync(`/proc/${pid}/task/${pid}/children`, 'utf8').trim().split(/\s+/).filter(Boolean);
      for (const kid of kids) ticks += processTicks(kid, true) ?? 0;
    }
    return ticks;
  } catch {
    return undefined;
  }
}

/** The busy and total ticks of the given cores (all of them without a list), from /proc/stat. */
function coreTicks(cores) {
  try {
    let busy = 0;
    let total = 0;
    for (const line of readFileSync('/proc/stat', 'utf8').split('\n')) {
      const match = /^cpu(\d+) (.*)$/.exec(line);
      if (match === null || (cores !== undefined && !cores.has(Number(match[1])))) continue;
      const [user, nice, system, idle, iowait, irq, softirq, steal] = match[2].trim().split(/\s+/).map(Number);
      busy += user + nice + system + irq + softirq + steal;
      total += user + nice + system + idle + iowait + irq + softirq + steal;
    }
    return { busy, total };
  } catch {
    return undefined;
  }
}

/** `"0,2-5"` → {0, 2, 3, 4, 5}. */
function coreSet(list) {
  if (list === undefined) return undefined;
  const cores = new Set();
  for (const part of list.split(',')) {
    const [from, to = from] = part.split('-').map(Number);
    for (let c = from; c <= to; c++) cores.add(c);
  }
  return cores;
}

/** CPU over one load: Redis's and the server's share of one core, and how busy the server cores were. */
function cpuMeter(redisPid, serverPid, cores) {
  const start = {
    redis: processTicks(redisPid),
    server: processTicks(serverPid, true),
    cores: coreTicks(cores),
    at: performance.now(),
  };
  return () => {
    const seconds = (performance.now() - start.at) / 1000;
    const hz = 100; // USER_HZ: /proc counts in hundredths of a second on Linux
    const share = (now, then) => (now === undefined || then === undefined ? NaN : (now - then) / hz / seconds);
    const coresNow = coreTicks(cores);
    const coresBusy =
      coresNow === undefined || start.cores === undefined
        ? NaN
        : (coresNow.busy - start.cores.busy) / Math.max(1, coresNow.total - start.cores.total);
    return {
      redis: share(processTicks(redisPid), start.redis),
      server: share(processTicks(serverPid, true), start.server),
      coresBusy,
    };
  };
}

const pct = (x) => (Number.isNaN(x) ? 'n/a' : `${Math.round(x * 100)}%`);
const SATURATED = 0.9;

/**
 * Runs the curve and records its figures. `ctx`: what bench/run.js has — `serveArgs` (the serve
 * command of one process with the store), `redisPid`, `cores` (the machine's), `clientCore`,
 * `serverCore` (where the other figures' servers and Redis run), `opts`, and its helpers
 * `startServer`, `load(server, durationS)`, `check(server)`, `record`, `progress`, `median`, `fmtRps`.
 */
export async function storeCurve(ctx) {
  const { cores, clientCore, serverCore, opts, progress, record, median, fmtRps } = ctx;
  // Redis stays where it is (the server core); with 4 cores or more the servers get the others but
  // the client's, so that only Redis's own limit can stop the curve.
  const serverCores = clientCore === undefined ? undefined : cores >= 4 ? `2-${cores - 1}` : serverCore;
  const room = serverCores === undefined ? cores : coreSet(serverCores).size;
  const sizes = [1, 2, 4, 8].filter((n) => n <= 2 || n <= room);
  const skipped = [4, 8].filter((n) => !sizes.includes(n));
  const start = (label, args) =>
    serverCores === undefined
      ? ctx.startServer(label, args, { command: process.execPath })
      : ctx.startServer(label, ['-c', serverCores, process.execPath, ...args], { command: 'taskset' });
  const servers = [{ key: 'one', n: 0, label: 'one mockapi process --store', args: ctx.serveArgs }];
  for (const n of sizes)
    servers.push({
      key: `w${n}`,
      n,
      label: `mockapi --workers ${n} --store`,
      args: [...ctx.serveArgs, '--workers', String(n)],
    });
  for (const server of servers) {
    server.handle = await start(server.label, server.args);
    await ctx.check(server);
  }
  const cpuCores = coreSet(serverCores);
  progress(
    `store curve: warm-up ${opts.warmupS} s each; servers on ${serverCores === undefined ? 'any core' : `core(s) ${serverCores}`}, Redis on ${serverCore ?? 'any core'}`,
  );
  for (const server of servers) await ctx.load(server, opts.warmupS);
  const runs = Object.fromEntries(servers.map((s) => [s.key, []]));
  try {
    for (let round = 1; round <= opts.rounds; round++) {
      for (const server of round % 2 === 1 ? servers : [...servers].reverse()) {
        await ctx.load(server, opts.settleS);
        const meter = cpuMeter(ctx.redisPid, server.handle.pid, cpuCores);
        const result = await ctx.load(server, opts.durationS);
        const cpu = meter();
        runs[server.key].push({ ...result, ...cpu });
        progress(
          `store curve round ${round}/${opts.rounds} ${server.label}: ${fmtRps(result.rps)}; CPU: Redis ${pct(cpu.redis)} of a core, mockapi ${pct(cpu.server)} of a core, server cores ${pct(cpu.coresBusy)} busy` +
            (result.non2xx + result.errors > 0 ? `, ${result.non2xx} non-2xx, ${result.errors} errors` : ''),
        );
      }
    }
  } finally {
    for (const server of servers) await server.handle.stop();
  }
  const med = (key, field) => median(runs[key].map((r) => r[field]));
  const ratio = (key, base) => median(runs[key].map((r, i) => r.rps / runs[base][i].rps));
  const bad = (key) => runs[key].reduce((sum, r) => sum + r.non2xx + r.errors, 0);
  /** What limited a load: Redis's one core, or the cores the servers (and, on a small machine, Redis) share. */
  const limitOf = (key) =>
    med(key, 'redis') >= SATURATED
      ? 'Redis (its one core)'
      : med(key, 'coresBusy') >= SATURATED
        ? `the server core${room > 1 ? 's' : ''} (CPU${serverCores === serverCore ? ', shared with Redis' : ''})`
        : undefined;
  const cpuNote = (key) =>
    `Redis ${pct(med(key, 'redis'))} of a core, mockapi ${pct(med(key, 'server'))} of a core, server cores ${pct(med(key, 'coresBusy'))} busy`;
  record(
    'one mockapi process --store (curve base)',
    fmtRps(med('one', 'rps')),
    undefined,
    `rounds: ${runs.one.map((r) => Math.round(r.rps)).join(' / ')}; ${cpuNote('one')}`,
  );
  let previous = 'one';
  for (const n of sizes) {
    const key = `w${n}`;
    // The curve must grow with n until something saturates: checked against the step before,
    // unless that step already found Redis or the server cores busy.
    const step = ratio(key, previous);
    const saturatedBefore = limitOf(previous);
    const check = n === 1 || saturatedBefore !== undefined ? undefined : { ratio: step, min: 1, invalid: bad(key) > 0 };
    const why =
      n === 1
        ? ''
        : saturatedBefore !== undefined
          ? `; not judged: ${saturatedBefore} already saturated at the step before`
          : `; ${step.toFixed(2)}× the step before`;
    record(
      `--workers ${n} --store`,
      fmtRps(med(key, 'rps')),
      check,
      `${bad(key) > 0 ? `${bad(key)} non-2xx or errors: not valid; ` : ''}${ratio(key, 'one').toFixed(2)}× one process --store${why}; ${cpuNote(key)}; rounds: ${runs[key].map((r) => Math.round(r.rps)).join(' / ')}`,
    );
    previous = key;
  }
  for (const n of skipped)
    record(
      `--workers ${n} --store`,
      'skipped',
      undefined,
      `needs ${n} cores for the servers beside the client's and Redis's; this machine has ${cores}`,
    );
  const limit = limitOf(previous);
  record(
    'store curve: what saturates',
    limit ?? 'nothing measured saturated',
    undefined,
    limit === undefined
      ? `at --workers ${sizes.at(-1)}: ${cpuNote(previous)}; the load generator (or the network stack) limits it`
      : `at --workers ${sizes.at(-1)}: ${cpuNote(previous)}`,
  );
}
