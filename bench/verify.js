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
// - With another build (`--compare <root>`, a checkout with its dist/ built): its verification runs
//   in the same rounds, interleaved with this build's and the plain client's, each against the
//   client of its round — the before/after of a change on a shared, loaded machine.
//
//   node bench/verify.js [endpoints] [rounds] [concurrency] [--compare <root>]   (after a build; default 1000 5 4)
//   node bench/run.js --only verify [--compare <root>/bin/mockapi.js]            (the same figures in the bench table)
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
const answerOf = (i) => ({
  id: i,
  object: 'item',
  name: `Item ${i}`,
  status: i % 3 === 0 ? 'active' : 'archived',
  price: { amount: i * 10, currency: 'usd' },
  tags: [
    { label: 'a', weight: 1 },
    { label: 'b', weight: 2 },
  ],
  created: '2026-01-01T00:00:00Z',
});

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
const CLIENT_SCRIPT =
  `(${plainClient.toString()})(process.argv[1], Number(process.argv[2]), Number(process.argv[3]))`.replace(
    '`Bearer ${UP_KEY}`',
    `'Bearer ${UP_KEY}'`,
  );

function configYaml(upstream, n) {
  const lines = [
    `apiKey: ${KEY}`,
    'upstream:',
    `  url: ${upstream}`,
    '  auth: { header: Authorization, value: "Bearer ${env.MOCKAPI_UP_KEY}" }',
    'endpoints:',
  ];
  for (let i = 0; i < n; i++) {
    lines.push(
      `  - recorded: GET /r${i}/items/:id`,
      '    method: GET',
      `    path: /r${i}/items/:id`,
      '    response:',
      `      body: ${JSON.stringify({ ...answerOf(i), name: `Thing ${i}` })}`,
      '    verify:',
      `      request: { params: { id: "${i}" } }`,
      '      expect: 200',
    );
  }
  return `${lines.join('\n')}\n`;
}

function startUpstream(pin) {
  return new Promise((done, fail) => {
    const [cmd, args] =
      pin === undefined
        ? [process.execPath, ['-e', UPSTREAM]]
        : ['taskset', ['-c', pin, process.execPath, '-e', UPSTREAM]];
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
const dist = (root, path) => import(pathToFileURL(join(root, 'dist', path)).href);

/** The verification as the command runs it (the build at `root`): the config read and checked, the mock started, then `run()` verifies every example. */
async function prepareVerify(configFile, root) {
  const { loadForVerify } = await dist(root, 'verify/served-data.js');
  const { startMockHost } = await dist(root, 'verify/mock-host.js');
  const { selectExamples } = await dist(root, 'verify/select.js');
  const { verifyItems } = await dist(root, 'verify/run.js');
  const { upstreamTarget } = await dist(root, 'verify/targets.js');
  const started = performance.now();
  const loaded = await loadForVerify(await readFile(configFile), configFile);
  if (!loaded.ok) throw new Error(loaded.issues.map((i) => i.message).join('\n'));
  const { config } = loaded;
  const mock = await startMockHost({
    served: loaded.served,
    apiKey: config.apiKey,
    basePath: '/mock',
    connections: 4,
    timeoutMs: 30_000,
  });
  const setupMs = performance.now() - started;
  const items = selectExamples(config, [], false).items;
  return {
    setupMs,
    async run(concurrency) {
      const upstream = upstreamTarget(config.upstream, { header: 'Authorization', value: `Bearer ${UP_KEY}` }, ENV);
      try {
        const results = await verifyItems(items, { upstream, mock, concurrency, ignore: [], secretName: () => false });
        const same = results.filter((r) => r.verdict === 'same').length;
        if (same !== items.length)
          throw new Error(
            `only ${same} of ${items.length} examples verified the same: ${JSON.stringify(results.find((r) => r.verdict !== 'same'))}`,
          );
      } finally {
        await upstream.close();
      }
    },
    close: () => mock.close(),
  };
}

/** Median, lowest and highest of a list. */
const spread = (values) => ({ median: median(values), min: Math.min(...values), max: Math.max(...values) });

/**
 * The figures: the verification phase against the plain client (median ratio over `rounds`
 * interleaved rounds, after three warm-ups of each), the setup time, and the whole command against a
 * whole plain-client process (median of `processRounds`). With `compare` (another build's root),
 * that build's verification runs in the same rounds and gets the same figures.
 */
export async function measureVerify({
  endpoints = 1000,
  rounds = 5,
  concurrency = 4,
  processRounds = 3,
  pin,
  compare,
} = {}) {
  const dir = await mkdtemp(join(tmpdir(), 'mockapi-bench-verify-'));
  const upstream = await startUpstream(pin);
  const builds = [['this', ROOT], ...(compare === undefined ? [] : [['previous', compare]])];
  const prepared = {};
  try {
    const config = join(dir, 'mockapi.yaml');
    await writeFile(config, configYaml(upstream.url, endpoints));
    for (const [name, root] of builds) prepared[name] = await prepareVerify(config, root);
    // Wall time, and this process's CPU time (every thread of it; the upstream's process apart): on a loaded machine the CPU is the steadier figure.
    const cpu = {};
    const time = async (which, fn) => {
      const t = performance.now();
      const c = process.cpuUsage();
      await fn();
      const used = process.cpuUsage(c);
      (cpu[which] ??= []).push((used.user + used.system) / 1000);
      return performance.now() - t;
    };
    const sides = ['client', ...builds.map(([name]) => name)];
    const runSide = (which) =>
      which === 'client' ? plainClient(upstream.url, endpoints, concurrency) : prepared[which].run(concurrency);
    // Warm-up: every side compiled by the JIT before anything counts (a cold first run is several times slower).
    for (let i = 0; i < 3; i++) for (const which of sides) await runSide(which);
    const runs = [];
    for (let round = 0; round < rounds; round++) {
      const run = {};
      // Each round starts with another side, so that none always runs right after the same one.
      for (let k = 0; k < sides.length; k++) {
        const which = sides[(round + k) % sides.length];
        run[which] = await time(which, () => runSide(which));
      }
      runs.push(run);
    }
    const processRuns = [];
    for (let round = 0; round < processRounds; round++) {
      const processRun = {
        client: (await timedProcess(['-e', CLIENT_SCRIPT, upstream.url, String(endpoints), String(concurrency)])).ms,
      };
      for (const [name, root] of builds) {
        const command = await timedProcess([
          join(root, 'bin', 'mockapi.js'),
          'verify',
          '-c',
          config,
          '--concurrency',
          String(concurrency),
        ]);
        if (command.code !== 0 || !command.out.includes(`${endpoints} same, 0 drift, 0 failed`))
          throw new Error(`a process run failed (${name}):\n${command.out.slice(-1000)}`);
        processRun[name] = command.ms;
      }
      processRuns.push(processRun);
    }
    const figures = (name) => ({
      verifyMs: median(runs.map((r) => r[name])),
      ratio: median(runs.map((r) => r[name] / r.client)),
      ratios: spread(runs.map((r) => r[name] / r.client)),
      cpuMs: median(cpu[name]),
      cpuRatio: median(cpu[name].map((ms, i) => ms / cpu.client[i])),
      setupMs: prepared[name].setupMs,
      processVerifyMs: median(processRuns.map((r) => r[name])),
      processRatio: median(processRuns.map((r) => r[name] / r.client)),
    });
    return {
      endpoints,
      concurrency,
      runs,
      clientMs: median(runs.map((r) => r.client)),
      clientCpuMs: median(cpu.client),
      processRuns,
      processClientMs: median(processRuns.map((r) => r.client)),
      ...figures('this'),
      ...(compare === undefined ? {} : { previous: figures('previous') }),
    };
  } finally {
    for (const verify of Object.values(prepared)) await verify.close();
    upstream.stop();
    await rm(dir, { recursive: true, force: true });
  }
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const args = process.argv.slice(2);
  const at = args.indexOf('--compare');
  const compare = at === -1 ? undefined : args.splice(at, 2)[1];
  const [endpoints, rounds, concurrency] = args.map(Number);
  const r = await measureVerify({
    endpoints: endpoints || 1000,
    rounds: rounds || 5,
    concurrency: concurrency || 4,
    compare,
  });
  for (const [i, run] of r.runs.entries()) {
    const other =
      r.previous === undefined
        ? ''
        : `, previous build ${run.previous.toFixed(0)} ms (${(run.previous / run.client).toFixed(2)}×)`;
    console.log(
      `round ${i + 1}: plain client ${run.client.toFixed(0)} ms, verify ${run.this.toFixed(0)} ms (${(run.this / run.client).toFixed(2)}×)${other}`,
    );
  }
  const shown = (f) =>
    `verify ${f.verifyMs.toFixed(0)} ms (median); median ratio ${f.ratio.toFixed(2)}× (rounds ${f.ratios.min.toFixed(2)}–${f.ratios.max.toFixed(2)}); CPU ${f.cpuMs.toFixed(0)} ms, ${f.cpuRatio.toFixed(2)}× the client's`;
  console.log(
    `${r.endpoints} endpoints, concurrency ${r.concurrency}: plain client ${r.clientMs.toFixed(0)} ms, CPU ${r.clientCpuMs.toFixed(0)} ms (medians); this build: ${shown(r)}`,
  );
  if (r.previous !== undefined) console.log(`previous build: ${shown(r.previous)}`);
  console.log(`target ≤ 1.5×: ${r.ratio <= 1.5 ? 'PASS' : 'FAIL'}`);
  console.log(
    `setup before it (read and check the config, start the mock): ${r.setupMs.toFixed(0)} ms${r.previous === undefined ? '' : `; previous build ${r.previous.setupMs.toFixed(0)} ms`}`,
  );
  console.log(
    `whole processes: plain client ${r.processClientMs.toFixed(0)} ms, mockapi verify ${r.processVerifyMs.toFixed(0)} ms (medians of ${r.processRuns.length}); ratio ${r.processRatio.toFixed(2)}×${r.previous === undefined ? '' : `; previous build ${r.previous.processVerifyMs.toFixed(0)} ms (${r.previous.processRatio.toFixed(2)}×)`}`,
  );
}
