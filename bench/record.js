// Memory of a recording: `mockapi record` proxies and records N requests (default 10,000) over a few
// hundred distinct paths and bodies from a local node:http upstream. The recording process's RSS is
// sampled before (after a warm-up), at its peak and after the requests; the target is
//   peak − before ≤ journal bound + captured bytes + slack,
// where the journal bound is `server.journal` entries each holding its bodies (up to 64 KiB) plus a
// per-entry overhead, the captured bytes are what the recording must keep of the distinct exchanges
// (each distinct body once, plus each exchange's path, query and headers), and slack is a stated
// constant for the heap's own growth. Each round measures the same traffic through `serve --upstream` (proxied, nothing recorded) and
// `record`, each in a fresh process. Run after a build: `node bench/record.js [requests] [paths] [rounds]`.
// Figures taken on a busy machine are not verdicts.
import { execFileSync, spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const BIN = fileURLToPath(new URL('../bin/mockapi.js', import.meta.url));
const KEY = 'mk_benchRecord00000000000000000001';
const REQUESTS = Number(process.argv[2] ?? 10_000);
const PATHS = Number(process.argv[3] ?? 300);
const JOURNAL = 1000; // server.journal's default
const JOURNAL_BODY_LIMIT = 64 * 1024;
/** What one journal entry costs beside its bodies: its object, headers and strings (stated, generous). */
const ENTRY_OVERHEAD = 4 * 1024;
/** What one recorded exchange costs beside its strings and the bodies it shares: objects, maps (stated; 761 B measured in-process). */
const EXCHANGE_OVERHEAD = 1024;
/** The heap's own growth under load (young generation, code, buffers in flight): stated. */
const SLACK = 64 * 1024 * 1024;
const CONNECTIONS = 8;
const ROUNDS = Number(process.argv[4] ?? 3);
const WARM_UP = 2000;

/** The body of path i: 200 B to ~4 KiB of JSON, the same bytes for every request to that path. */
const bodyOf = (i) =>
  JSON.stringify({
    id: i,
    name: `item ${i}`,
    tags: Array.from({ length: 4 + (i % 60) }, (_, t) => `tag-${i}-${t}`),
    note: 'x'.repeat((i * 37) % 1500),
  });
const bodies = Array.from({ length: PATHS }, (_, i) => Buffer.from(bodyOf(i)));

const upstream = http.createServer((req, res) => {
  const i = Number(/\/items\/(\d+)/.exec(req.url)?.[1] ?? 0) % PATHS;
  res.writeHead(200, {
    'content-type': 'application/json',
    'content-length': bodies[i].length,
    'request-id': `req-${i}`,
  });
  res.end(bodies[i]);
});
await new Promise((done) => upstream.listen(0, '127.0.0.1', done));
const upstreamUrl = `http://127.0.0.1:${upstream.address().port}`;

const env = { ...process.env, HTTP_PROXY: '', http_proxy: '', HTTPS_PROXY: '', https_proxy: '' };
const agent = new http.Agent({ keepAlive: true, maxSockets: CONNECTIONS });
const headers = { 'x-api-key': KEY, accept: 'application/json', 'user-agent': 'mockapi-bench' };
const pathOf = (n) => `/items/${n % PATHS}${n % 3 === 0 ? `?page=${n % 7}` : ''}`;
const paths = Array.from({ length: REQUESTS }, (_, n) => pathOf(n));
const warmPaths = Array.from({ length: WARM_UP }, (_, n) => pathOf(n));

/** The child's resident set, in bytes (Linux: /proc; elsewhere: ps). */
function rssOf(pid) {
  try {
    const kb = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1];
    if (kb !== undefined) return Number(kb) * 1024;
  } catch {
    // not Linux
  }
  return Number(execFileSync('ps', ['-o', 'rss=', '-p', String(pid)], { encoding: 'utf8' }).trim()) * 1024;
}

/**
 * One measured run: `mockapi record` (recording) or `mockapi serve --upstream` (the same proxying,
 * nothing recorded), a warm-up, then the requests; RSS before, at the peak and after.
 */
async function measure(recording) {
  const dir = mkdtempSync(join(tmpdir(), 'mockapi-bench-record-'));
  const config = join(dir, 'mockapi.yaml');
  writeFileSync(
    config,
    `apiKey: ${KEY}\nupstream:\n  url: ${upstreamUrl}\nendpoints:\n  - method: GET\n    path: /warm\n    response: { body: { warm: true } }\n`,
  );
  const args = recording ? ['record'] : ['serve', '--upstream', upstreamUrl];
  const child = spawn(
    process.execPath,
    [BIN, ...args, '-c', config, '--port', '0', '--no-state', '--no-watch', '--log', 'off'],
    { stdio: ['ignore', 'pipe', 'pipe'], env },
  );
  let stderr = '';
  child.stderr.on('data', (d) => (stderr += d));
  const mockUrl = await new Promise((done) =>
    child.stdout.on('data', (d) => {
      const m = /listening on (\S+)/.exec(String(d));
      if (m) done(m[1]);
    }),
  );
  const get = (path) =>
    new Promise((ok, ko) =>
      http
        .get(`${mockUrl}/mock${path}`, { agent, headers }, (res) => res.resume().on('end', () => ok(res.statusCode)))
        .on('error', ko),
    );
  async function run(list) {
    let next = 0;
    const statuses = new Map();
    await Promise.all(
      Array.from({ length: CONNECTIONS }, async () => {
        while (next < list.length) {
          const status = await get(list[next++]);
          statuses.set(status, (statuses.get(status) ?? 0) + 1);
        }
      }),
    );
    return statuses;
  }
  // Warm-up, so the heap has grown to its working size before the baseline: the mock's own path, and
  // WARM_UP requests upstream (undici's first load; recorded when recording, and counted as captured).
  await run(Array.from({ length: 500 }, () => '/warm'));
  await run(warmPaths);
  await new Promise((r) => setTimeout(r, 500));
  const before = rssOf(child.pid);
  let peak = before;
  const sampler = setInterval(() => (peak = Math.max(peak, rssOf(child.pid))), 20);
  const started = performance.now();
  const statuses = await run(paths);
  const seconds = (performance.now() - started) / 1000;
  await new Promise((r) => setTimeout(r, 1000));
  peak = Math.max(peak, rssOf(child.pid));
  const after = rssOf(child.pid);
  clearInterval(sampler);
  // A recording is written at stop: how long the write of every exchange takes.
  const stopAt = performance.now();
  child.kill('SIGINT');
  await new Promise((done) => child.on('exit', done));
  const stopSeconds = (performance.now() - stopAt) / 1000;
  const summary = stderr.split('\n').find((l) => l.includes('recorded into'));
  rmSync(dir, { recursive: true, force: true });
  return { before, peak, after, seconds, statuses, stopSeconds, summary };
}

// What a recording must keep: each distinct body once; per exchange its path, query and headers.
const requestHeaderBytes = Object.entries({ ...headers, host: '127.0.0.1:65535', connection: 'keep-alive' }).reduce(
  (n, [k, v]) => n + k.length + v.length,
  0,
);
const responseHeaderBytes = (i) =>
  'content-type'.length +
  'application/json'.length +
  'content-length'.length +
  String(bodies[i].length).length +
  'request-id'.length +
  `req-${i}`.length +
  'date'.length +
  29 +
  'connection'.length +
  'keep-alive'.length +
  'keep-alive'.length +
  10;
const distinctBodies = bodies.reduce((n, b) => n + b.length, 0);
const perExchange = [...warmPaths, ...paths].reduce(
  (n, p) => n + 'GET'.length + p.length + requestHeaderBytes + responseHeaderBytes(Number(/\d+/.exec(p)[0])),
  0,
);
const captured = distinctBodies + perExchange;
const allBodies = paths.reduce((n, p) => n + bodies[Number(/\d+/.exec(p)[0])].length, 0);
const avgBody = allBodies / paths.length;
const journalBound = JOURNAL * (ENTRY_OVERHEAD + Math.min(avgBody, JOURNAL_BODY_LIMIT));
const allowedProxy = journalBound + SLACK;
const allowedRecord = journalBound + captured + (WARM_UP + REQUESTS) * EXCHANGE_OVERHEAD + SLACK;
const mib = (n) => `${(n / 1024 / 1024).toFixed(1)} MiB`;

console.log(
  `${REQUESTS} requests over ${PATHS} paths per run, ${CONNECTIONS} connections; ${ROUNDS} round${ROUNDS === 1 ? '' : 's'}, each: serve --upstream (nothing recorded), then record`,
);
console.log(
  `journal bound ${mib(journalBound)} (${JOURNAL} entries × (${ENTRY_OVERHEAD} B + ${Math.round(avgBody)} B of body)); captured ${mib(captured)} (distinct bodies ${mib(distinctBodies)} + per exchange ${mib(perExchange)}; each body once per request would be ${mib(allBodies)})`,
);
console.log(
  `allowed growth: proxy ≤ journal bound + ${mib(SLACK)} slack = ${mib(allowedProxy)}; record ≤ journal bound + captured + ${WARM_UP + REQUESTS} × ${EXCHANGE_OVERHEAD} B + ${mib(SLACK)} slack = ${mib(allowedRecord)}`,
);
const grown = { proxy: [], record: [] };
const peaks = { proxy: [], record: [] };
for (let round = 1; round <= ROUNDS; round++) {
  for (const recording of [false, true]) {
    const m = await measure(recording);
    const grew = m.peak - m.before;
    grown[recording ? 'record' : 'proxy'].push(grew);
    peaks[recording ? 'record' : 'proxy'].push(m.peak);
    const statuses = [...m.statuses].map(([s, n]) => `${n} × ${s}`).join(', ');
    console.log(
      `round ${round} ${recording ? 'record ' : 'proxy  '}: ${statuses} in ${m.seconds.toFixed(1)} s; RSS before ${mib(m.before)}, peak ${mib(m.peak)}, after ${mib(m.after)}; grew ${mib(grew)}` +
        (recording ? `; written at stop in ${m.stopSeconds.toFixed(1)} s (${m.summary?.trim() ?? 'no summary'})` : ''),
    );
  }
}
const median = (list) => [...list].sort((a, b) => a - b)[Math.floor(list.length / 2)];
const proxy = median(grown.proxy);
const record = median(grown.record);
const own = median(peaks.record) - median(peaks.proxy);
console.log(
  `median growth: proxy ${mib(proxy)}, record ${mib(record)}; the recording's own cost (median peak of record − of proxy) ${mib(own)} against captured + per-exchange ${mib(captured + (WARM_UP + REQUESTS) * EXCHANGE_OVERHEAD)}`,
);
console.log(`target proxy growth ≤ ${mib(allowedProxy)}: ${proxy <= allowedProxy ? 'PASS' : 'FAIL'}`);
console.log(`target record growth ≤ ${mib(allowedRecord)}: ${record <= allowedRecord ? 'PASS' : 'FAIL'}`);
upstream.close();
agent.destroy();
