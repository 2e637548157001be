// Sessions (bench/run.js --only sessions): a request in a named session (X-Mockapi-Session, and the
// /__session/<id>/ prefix) against the same request in the default session, in the same server and
// the same interleaved rounds — requests per second, and the server's CPU time per request (steadier
// on a shared machine: time spent descheduled is not in it); and the memory 10,000 sessions add,
// idle (made by POST /__mockapi/sessions) and after one request each (their journal, counters and
// windows made).
import { request } from 'node:http';
import { join } from 'node:path';
import { readFileSync, writeFileSync } from 'node:fs';
import { oneEndpointYaml } from '../configs.js';
import { runLoad } from '../load.js';
import { CLI, opts, CLIENT_CORE, progress, AUTH } from '../lib/options.js';
import { startServer, median, rssMb, sleep } from '../lib/processes.js';
import { record, fmtRps, fmtMb } from '../lib/report.js';

const SESSIONS = 10_000;

/** Sends `count` requests made by `make(i)`, `parallel` at a time, on keep-alive connections. */
async function many(count, parallel, make) {
  let next = 0;
  const one = () =>
    new Promise((resolve, reject) => {
      const { url, method, headers, body } = make(next++);
      const req = request(url, { method, headers, agent: KEEP_ALIVE }, (res) => {
        res.resume();
        res.on('end', () =>
          res.statusCode >= 400 ? reject(new Error(`${method} ${url}: ${res.statusCode}`)) : resolve(),
        );
      });
      req.on('error', reject);
      req.end(body);
    });
  const lane = async () => {
    while (next < count) await one();
  };
  await Promise.all(Array.from({ length: parallel }, lane));
}

let KEEP_ALIVE;

/** CPU time a process has used (user + system), ms, from /proc; undefined where there is none. */
function cpuMs(pid) {
  try {
    const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
    return (Number(fields[11]) + Number(fields[12])) * 10; // clock ticks of 10 ms
  } catch {
    return undefined;
  }
}

/** RSS after the server settled: sampled until two readings a second apart agree within 1 MB. */
async function settledRss(pid) {
  let last = rssMb(pid);
  for (let i = 0; i < 10; i++) {
    await sleep(1000);
    const now = rssMb(pid);
    if (now !== undefined && last !== undefined && Math.abs(now - last) < 1) return now;
    last = now;
  }
  return last;
}

export async function sessionsScenario(dir) {
  const { Agent } = await import('node:http');
  KEEP_ALIVE = new Agent({ keepAlive: true, maxSockets: 16 });
  const file = join(dir, 'sessions.yaml');
  writeFileSync(file, oneEndpointYaml());
  const server = await startServer('mockapi sessions', [
    CLI,
    'serve',
    '-c',
    file,
    '--port',
    '0',
    '--no-state',
    '--log',
    'off',
  ]);
  try {
    await speed(server);
    await memory(server);
  } finally {
    KEEP_ALIVE.destroy();
    await server.stop();
  }
}

async function speed(server) {
  const loads = [
    { key: 'default', label: 'default session', path: '/mock/users/42', headers: AUTH },
    {
      key: 'header',
      label: 'named session (X-Mockapi-Session)',
      path: '/mock/users/42',
      headers: { ...AUTH, 'x-mockapi-session': 'bench-header' },
      min: 0.95,
    },
    {
      key: 'prefix',
      label: 'named session (/__session/<id>/ prefix)',
      path: '/__session/bench-prefix/mock/users/42',
      headers: AUTH,
      min: 0.95,
    },
  ];
  const load = (l, durationS) =>
    runLoad({
      tool: opts.tool,
      url: `${server.url}${l.path}`,
      headers: l.headers,
      durationS,
      connections: opts.connections,
      pinCore: CLIENT_CORE,
    });
  progress(`sessions warm-up: ${opts.warmupS} s each`);
  for (const l of loads) await load(l, opts.warmupS);
  const runs = Object.fromEntries(loads.map((l) => [l.key, []]));
  for (let round = 1; round <= opts.rounds; round++) {
    const order = round % 2 === 1 ? loads : [...loads].reverse();
    for (const l of order) {
      await load(l, opts.settleS);
      const cpuBefore = cpuMs(server.pid);
      const result = await load(l, opts.durationS);
      const cpuAfter = cpuMs(server.pid);
      // µs of the server's CPU per request answered.
      result.cpuUs =
        cpuBefore === undefined || cpuAfter === undefined
          ? undefined
          : ((cpuAfter - cpuBefore) * 1000) / (result.rps * opts.durationS);
      runs[l.key].push(result);
      progress(
        `round ${round}/${opts.rounds} ${l.label}: ${fmtRps(result.rps)}${result.cpuUs === undefined ? '' : `, ${result.cpuUs.toFixed(1)} µs CPU per request`}`,
      );
    }
  }
  for (const l of loads.filter((x) => x.min !== undefined)) {
    const ratios = runs[l.key].map((r, i) => r.rps / runs.default[i].rps);
    const bad = [...runs[l.key], ...runs.default].reduce((sum, r) => sum + r.non2xx + r.errors, 0);
    record(
      `sessions: a request in a ${l.label}`,
      fmtRps(median(runs[l.key].map((r) => r.rps))),
      { ratio: median(ratios), min: l.min, invalid: bad > 0 },
      bad > 0
        ? `${bad} non-2xx or errors`
        : `against ${fmtRps(median(runs.default.map((r) => r.rps)))} in the default session; ratio per round: ${ratios.map((x) => x.toFixed(2)).join(' / ')}`,
    );
    if (runs[l.key].some((r) => r.cpuUs === undefined)) continue;
    // Requests per CPU second, named against default: the same figure without the machine's other load.
    const cpuRatios = runs[l.key].map((r, i) => runs.default[i].cpuUs / r.cpuUs);
    const us = median(runs[l.key].map((r) => r.cpuUs));
    record(
      `sessions: CPU per request in a ${l.label}`,
      `${us.toFixed(1)} µs`,
      { ratio: median(cpuRatios), min: l.min },
      `against ${median(runs.default.map((r) => r.cpuUs)).toFixed(1)} µs in the default session (requests per CPU second, named / default); per round: ${cpuRatios.map((x) => x.toFixed(2)).join(' / ')}`,
    );
  }
  // The sessions of this part go, so that the memory part counts from none.
  for (const id of ['bench-header', 'bench-prefix'])
    await many(1, 1, () => ({
      url: `${server.url}/__mockapi/sessions/${id}`,
      method: 'DELETE',
      headers: { 'content-type': 'application/json' },
    }));
}

async function memory(server) {
  const json = { 'content-type': 'application/json' };
  const before = await settledRss(server.pid);
  await many(SESSIONS, 16, (i) => ({
    url: `${server.url}/__mockapi/sessions`,
    method: 'POST',
    headers: json,
    body: JSON.stringify({ id: `idle-${i}` }),
  }));
  const idle = await settledRss(server.pid);
  await many(SESSIONS, 16, (i) => ({
    url: `${server.url}/mock/users/${i}`,
    method: 'GET',
    headers: { ...AUTH, 'x-mockapi-session': `idle-${i}` },
  }));
  const used = await settledRss(server.pid);
  if (before === undefined || idle === undefined || used === undefined) return;
  const n = SESSIONS.toLocaleString('en-US');
  record(
    `sessions: ${n} idle sessions add`,
    fmtMb(idle - before),
    { value: idle - before, max: 50, unit: ' MB' },
    `RSS ${fmtMb(before)} → ${fmtMb(idle)} (made by POST /__mockapi/sessions)`,
  );
  // For the record (the target is for idle sessions): what a session costs once it answered.
  record(
    `sessions: ${n} sessions after one request each add`,
    fmtMb(used - before),
    undefined,
    `RSS ${fmtMb(before)} → ${fmtMb(used)}: ${(((used - before) * 1024) / SESSIONS).toFixed(1)} KB a session with its journal entry, counters and windows`,
  );
}
