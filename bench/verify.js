// `mockapi verify` of 1,000 endpoints against a local upstream, against the same 1,000 requests sent
// by a plain HTTP client (node:http, keep-alive, the same concurrency). The upstream is a node:http
// server in a process of its own (on the server core when pinned), answering at once: the worst
// case for the ratio, since nothing of the network's time hides verify's own work.
//
// - The figure (target ≤ 1.5×): the verification itself — each endpoint's example sent to the
//   upstream and to the mock (served from its own thread, as the command serves it) and the two
//   answers compared — against the plain client's 1,000 requests, both in this process after three
//   warm-up runs each, interleaved round by round; the median ratio counts.
// - Information: the setup before it (reading and checking the 1,000-endpoint config, starting
//   the mock: what `mockapi serve` pays too), and the whole `mockapi verify` command against a
//   whole plain-client process (node's start and a cold JIT included on both sides).
//
//   node bench/verify.js [endpoints] [rounds] [concurrency]     (after a build; default 1000 5 4)
//   node bench/run.js --only verify                              (the same figures in the bench table)
import { spawn } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import http from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const UP_KEY = 'bench-upstream-key-abcdef';
const KEY = 'mk_benchVerify00000000000000000001';
const ENV = { HTTP_PROXY: '', http_proxy: '', HTTPS_PROXY: '', https_proxy: '', MOCKAPI_UP_KEY: UP_KEY };

/** Each endpoint's answer upstream: the shape the mock has, other values. */
const answerOf = (i) => ({ id: i, object: 'item', name: `Item ${i}`, status: i % 3 === 0 ? 'active' : 'archived', price: { amount: i * 10, currency: 'usd' }, tags: [{ label: 'a', weight: 1 }, { label: 'b', weight: 2 }], created: '2026-01-01T00:00:00Z' });

const UPSTREAM = `
const http = require('node:http');
const answerOf = ${answerOf.toString()};
const server = http.createServer((req, res) => {
  if (req.headers.authorization !== 'Bearer ${UP_KEY}') { res.writeHead(401); res.end(); return; }
  const m = /^\\/r(\\d+)\\/items\\/(\\d+)$/.exec(req.url);
  const text = JSON.stringify(m === null ? { error: 'not found' } : answerOf(Number(m[2])));
  res.writeHead(m === null ? 404 : 200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) });
  res.end(text);
});
server.listen(0, '127.0.0.1', () => process.stdout.write('listening on http://127.0.0.1:' + server.address().port + '\\n'));
`;

/** The plain client: `n` GETs, `concurrency` at a time on keep-alive connections, each body read and parsed. */
function plainClient(url, n, concurrency) {
  const agent = new http.Agent({ keepAlive: true, maxSockets: concurrency });
  const get = (path) =>
    new Promise((ok, ko) =>
      http
        .get(url + path, { agent, headers: { authorization: `Bearer ${UP_KEY}` } }, (res) => {
          const chunks = [];
          res.on('data', (c) => chunks.push(c));
          res.on('end', () => ok(JSON.parse(Buffer.concat(chunks).toString())));
        })
        .on('error', ko),
    );
  let next = 0;
  const worker = async () => {
    while (next < n) {
      const i = next++;
      await get(`/r${i}/items/${i}`);
    }
  };
  return Promise.all(Array.from({ length: concurrency }, worker)).finally(() => agent.destroy());
}
const CLIENT_SCRIPT = `(${plainClient.toString()})(process.argv[1], Number(process.argv[2]), Number(process.argv[3]))`.replace('`Bearer ${UP_KEY}`', `'Bearer ${UP_KEY}'`);

function configYaml(upstream, n) {
  const lines = [`apiKey: ${KEY}`, 'upstream:', `  url: ${upstream}`, '  auth: { header: Authorization, value: "Bearer ${env.MOCKAPI_UP_KEY}" }', 'endpoints:'];
  for (let i = 0; i < n; i++) {
    lines.push(`  - recorded: GET /r${i}/items/:id`, '    method: GET', `    path: /r${i}/items/:id`, '    response:', `      body: ${JSON.stringify({ ...answerOf(i), name: `Thing ${i}` })}`, '    verify:', `      request: { params: { id: "${i}" } }`, '      expect: 200');
  }
  return `${lines.join('\n')}\n`;
}

function startUpstream(pin) {
  return new Promise((done, fail) => {
    const [cmd, args] = pin === undefined ? [process.execPath, ['-e', UPSTREAM]] : ['taskset', ['-c', pin, process.execPath, '-e', UPSTREAM]];
    const child = spawn(cmd, args, { stdio: ['ignore', 'pipe', 'inherit'] });
    child.on('error', fail);
    child.stdout.on('data', (d) => {
      const m = /listening on (\S+)/.exec(String(d));
      if (m) done({ url: m[1], stop: () => child.kill('SIGKILL') });
    });
  });
}

/** A node process run to its end: wall time (ms), exit code, output. */
function timedProcess(args) {
  return new Promise((done, fail) => {
    const started = performance.now();
    const child = spawn(process.execPath, args, { env: { ...process.env, ...ENV }, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    child.stdout.on('data', (d) => (out += d));
    child.stderr.on('data', (d) => (out += d));
    child.on('error', fail);
    child.on('close', (code) => done({ ms: performance.now() - started, code, out }));
  });
}

const median = (values) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];
const dist = (path) => import(pathToFileURL(join(ROOT, 'dist', path)).href);

/** The verification as the command runs it: the config read and checked, the mock started in its thread, then `run()` verifies every example. */
async function prepareVerify(configFile) {
  const { loadForVerify } = await dist('verify/served-data.js');
  const { startMockHost } = await dist('verify/mock-host.js');
  const { selectExamples } = await dist('verify/select.js');
  const { verifyItems } = await dist('verify/run.js');
  const { upstreamTarget } = await dist('verify/targets.js');
  const started = performance.now();
  const loaded = await loadForVerify(await readFile(configFile), configFile);
  if (!loaded.ok) throw new Error(loaded.issues.map((i) => i.message).join('\n'));
  const { config } = loaded;
  const mock = await startMockHost({ served: loaded.served, apiKey: config.apiKey, basePath: '/mock', connections: 4, timeoutMs: 30_000 });
  const setupMs = performance.now() - started;
  const items = selectExamples(config, [], false).items;
  return {
    setupMs,
    async run(concurrency) {
      const upstream = upstreamTarget(config.upstream, { header: 'Authorization', value: `Bearer ${UP_KEY}` }, ENV);
      try {
        const results = await verifyItems(items, { upstream, mock, concurrency, ignore: [], secretName: () => false });
        const same = results.filter((r) => r.verdict === 'same').length;
        if (same !== items.length) throw new Error(`only ${same} of ${items.length} examples verified the same: ${JSON.stringify(results.find((r) => r.verdict !== 'same'))}`);
      } finally {
        await upstream.close();
      }
    },
    close: () => mock.close(),
  };
}

/**
 * The figures: the verification phase against the plain client (median ratio over `rounds`
 * interleaved rounds, after one warm-up of each), the setup time, and the whole command against a
 * whole plain-client process (median of `processRounds`).
 */
export async function measureVerify({ endpoints = 1000, rounds = 5, concurrency = 4, processRounds = 3, pin } = {}) {
  const dir = await mkdtemp(join(tmpdir(), 'mockapi-bench-verify-'));
  const upstream = await startUpstream(pin);
  let verify;
  try {
    const config = join(dir, 'mockapi.yaml');
    await writeFile(config, configYaml(upstream.url, endpoints));
    verify = await prepareVerify(config);
    const time = async (fn) => {
      const t = performance.now();
      await fn();
      return performance.now() - t;
    };
    // Warm-up: both sides compiled by the JIT before anything counts (a cold first run of either is several times slower).
    for (let i = 0; i < 3; i++) {
      await verify.run(concurrency);
      await plainClient(upstream.url, endpoints, concurrency);
    }
    const runs = [];
    for (let round = 0; round < rounds; round++) {
      const run = {};
      for (const which of round % 2 === 0 ? ['client', 'verify'] : ['verify', 'client']) {
        run[which] = await time(() => (which === 'verify' ? verify.run(concurrency) : plainClient(upstream.url, endpoints, concurrency)));
      }
      runs.push(run);
    }
    const processRuns = [];
    for (let round = 0; round < processRounds; round++) {
      const client = await timedProcess(['-e', CLIENT_SCRIPT, upstream.url, String(endpoints), String(concurrency)]);
      const command = await timedProcess([join(ROOT, 'bin', 'mockapi.js'), 'verify', '-c', config, '--concurrency', String(concurrency)]);
      if (client.code !== 0 || command.code !== 0 || !command.out.includes(`${endpoints} same, 0 drift, 0 failed`)) throw new Error(`a process run failed:\n${client.out.slice(-1000)}\n${command.out.slice(-1000)}`);
      processRuns.push({ client: client.ms, verify: command.ms });
    }
    return {
      endpoints,
      concurrency,
      runs,
      verifyMs: median(runs.map((r) => r.verify)),
      clientMs: median(runs.map((r) => r.client)),
      ratio: median(runs.map((r) => r.verify / r.client)),
      setupMs: verify.setupMs,
      processRuns,
      processRatio: median(processRuns.map((r) => r.verify / r.client)),
      processVerifyMs: median(processRuns.map((r) => r.verify)),
      processClientMs: median(processRuns.map((r) => r.client)),
    };
  } finally {
    await verify?.close();
    upstream.stop();
    await rm(dir, { recursive: true, force: true });
  }
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const [endpoints, rounds, concurrency] = process.argv.slice(2).map(Number);
  const r = await measureVerify({ endpoints: endpoints || 1000, rounds: rounds || 5, concurrency: concurrency || 4 });
  for (const [i, run] of r.runs.entries()) console.log(`round ${i + 1}: plain client ${run.client.toFixed(0)} ms, verify ${run.verify.toFixed(0)} ms, ratio ${(run.verify / run.client).toFixed(2)}×`);
  console.log(`${r.endpoints} endpoints, concurrency ${r.concurrency}: plain client ${r.clientMs.toFixed(0)} ms, verify ${r.verifyMs.toFixed(0)} ms (medians); median ratio ${r.ratio.toFixed(2)}×`);
  console.log(`target ≤ 1.5×: ${r.ratio <= 1.5 ? 'PASS' : 'FAIL'}`);
  console.log(`setup before it (read and check the config, start the mock): ${r.setupMs.toFixed(0)} ms`);
  console.log(`whole processes: plain client ${r.processClientMs.toFixed(0)} ms, mockapi verify ${r.processVerifyMs.toFixed(0)} ms (medians of ${r.processRuns.length}); ratio ${r.processRatio.toFixed(2)}×`);
}
