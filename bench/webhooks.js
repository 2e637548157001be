#!/usr/bin/env node
// Webhooks: (1) an endpoint whose answer has a `send` against the same endpoint without one, in the
// same server, interleaved rounds (target: at least 0.8×: delivery is off the request path); (2)
// deliveries per second to a local receiver sustained over a few seconds (target: at least 1,000/s),
// with what is still pending at the end. The receiver is a node:http server in a child process (it
// reads every body and answers 204); the server is the built CLI. Only 127.0.0.1. Run after a build:
//
//   node bench/webhooks.js [--rounds 5] [--seconds 3] [--sustain 5] [--connections 32] [--profile <dir>]
//
// --profile starts the server under `node --cpu-prof` and writes its profile into <dir> at stop.
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { availableParallelism, tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { defaultTool, runLoad } from './load.js';

const { values } = parseArgs({
  options: {
    rounds: { type: 'string', default: '5' },
    seconds: { type: 'string', default: '3' },
    sustain: { type: 'string', default: '5' },
    connections: { type: 'string', default: '32' },
    profile: { type: 'string' },
  },
});
const ROUNDS = Number(values.rounds);
const SECONDS = Number(values.seconds);
const SUSTAIN = Math.max(5, Number(values.sustain));
const CONNECTIONS = Number(values.connections);
const TARGET_RATIO = 0.8;
const TARGET_RATE = 1000;
const KEY = 'mk_benchWebhooks000000000000000001';
const BIN = fileURLToPath(new URL('../bin/mockapi.js', import.meta.url));
const tool = defaultTool();

// The receiver: reads each body, answers 204, counts; `GET /count` says how many it got.
const RECEIVER = `
const http = require('node:http');
let count = 0;
const server = http.createServer((req, res) => {
  if (req.method === 'GET') return res.end(String(count));
  req.on('data', () => {});
  req.on('end', () => { count++; res.writeHead(204).end(); });
});
server.keepAliveTimeout = 30000;
server.listen(0, '127.0.0.1', () => console.log('receiver ' + server.address().port));
`;

function child(args, pattern, options = {}) {
  const proc = spawn(process.execPath, args, { stdio: ['ignore', 'pipe', 'pipe'], ...options });
  const ready = new Promise((done, fail) => {
    let out = '';
    const look = (chunk) => {
      out += chunk;
      const m = pattern.exec(out);
      if (m) done(m[1]);
    };
    proc.stdout.on('data', look);
    proc.stderr.on('data', look);
    proc.once('exit', (code) => fail(new Error(`${args.join(' ')} exited with ${code}: ${out}`)));
  });
  return { proc, ready };
}

const dir = mkdtempSync(join(tmpdir(), 'mockapi-bench-webhooks-'));
const receiver = child(['-e', RECEIVER], /receiver (\d+)/);
const receiverUrl = `http://127.0.0.1:${await receiver.ready}`;
const body = '{ id: "ch_1", object: charge, amount: 500, currency: usd, status: succeeded }';
writeFileSync(
  join(dir, 'mockapi.yaml'),
  `apiKey: ${KEY}
webhooks:
  targets:
    app:
      url: ${receiverUrl}/hook
      sign: { scheme: stripe, secret: whsec_bench_secret }
      retry: { schedule: standard, timeout: 10s }
  events:
    charge.succeeded:
      envelope: stripe
      data: { object: { id: "ch_1", object: charge, status: succeeded } }
endpoints:
  - method: GET
    path: /plain
    response: { body: ${body} }
  - method: GET
    path: /send
    response:
      body: ${body}
      send: [{ event: charge.succeeded, to: app }]
`,
);
const profile = values.profile === undefined ? [] : ['--cpu-prof', '--cpu-prof-dir', resolve(values.profile)];
const server = child(
  [
    ...profile,
    BIN,
    'serve',
    '-c',
    join(dir, 'mockapi.yaml'),
    '--port',
    '0',
    '--no-state',
    '--no-watch',
    '--log',
    'off',
  ],
  /listening on (http:\/\/\S+)/,
);
const url = await server.ready;
const headers = { 'x-api-key': KEY };

const received = async () => Number(await (await fetch(`${receiverUrl}/count`)).text());
const webhookCounts = async () => (await (await fetch(`${url}/__mockapi/webhooks`)).json()).targets[0];

/** Waits until nothing is pending (a backlog must not slow the next round), at most 60 s. */
async function drained() {
  const until = Date.now() + 60_000;
  for (;;) {
    const { pending } = await webhookCounts();
    if (pending === 0 || Date.now() > until) return pending;
    await new Promise((r) => setTimeout(r, 50));
  }
}

/**
 * CPU seconds (user + system) of the server's main thread, of the whole server process (its
 * delivery thread included) and of the receiver, from /proc (Linux; null elsewhere). Less at the
 * mercy of a busy machine than req/s: the server's main thread answers every request, so its CPU
 * per answer bounds req/s on a machine with cores to spare; on a machine without (2 cores), the
 * delivery thread and the receiver take CPU from the answers too, and the last two columns say how much.
 */
function cpuSeconds() {
  try {
    const ticks = (file) =>
      readFileSync(file, 'utf8')
        .replace(/^.*\) /s, '')
        .split(' ')
        .slice(11, 13)
        .reduce((sum, n) => sum + Number(n), 0) / 100;
    return {
      main: ticks(`/proc/${server.proc.pid}/task/${server.proc.pid}/stat`),
      all: ticks(`/proc/${server.proc.pid}/stat`),
      receiver: ticks(`/proc/${receiver.proc.pid}/stat`),
    };
  } catch {
    return null;
  }
}

async function load(path, durationS) {
  const before = cpuSeconds();
  const result = await runLoad({ tool, url: `${url}/mock${path}`, headers, durationS, connections: CONNECTIONS });
  const after = cpuSeconds();
  if (result.non2xx > 0 || result.errors > 0)
    throw new Error(`${path}: ${result.non2xx} non-2xx answers, ${result.errors} errors`);
  const answers = result.rps * durationS;
  const perAnswer = (key) => (before === null || after === null ? NaN : ((after[key] - before[key]) * 1e6) / answers);
  return { rps: result.rps, mainUs: perAnswer('main'), allUs: perAnswer('all'), receiverUs: perAnswer('receiver') };
}

const median = (list) => [...list].sort((a, b) => a - b)[Math.floor(list.length / 2)];
try {
  await load('/plain', 1); // warm-up
  await load('/send', 1);
  await drained();
  console.log(
    `${availableParallelism()} cores; ${tool}, ${CONNECTIONS} connections, ${SECONDS} s a load, ${ROUNDS} interleaved rounds (the order alternates; pending deliveries drained before each load):`,
  );
  const ratios = [];
  const cpuRatios = [];
  const us = (n) => (Number.isNaN(n) ? '?' : n.toFixed(0));
  for (let round = 1; round <= ROUNDS; round++) {
    const r = {};
    for (const path of round % 2 === 1 ? ['/plain', '/send'] : ['/send', '/plain']) {
      await drained();
      r[path] = await load(path, SECONDS);
    }
    const [plain, send] = [r['/plain'], r['/send']];
    ratios.push(send.rps / plain.rps);
    cpuRatios.push(plain.mainUs / send.mainUs);
    console.log(
      `  round ${round}: without send ${plain.rps.toFixed(0)} req/s, with send ${send.rps.toFixed(0)} req/s, ratio ${ratios.at(-1).toFixed(2)}×; server main thread CPU per answer ${us(plain.mainUs)} µs / ${us(send.mainUs)} µs (whole server process ${us(plain.allUs)} / ${us(send.allUs)} µs, receiver ${us(plain.receiverUs)} / ${us(send.receiverUs)} µs)`,
    );
  }
  const ratio = median(ratios);
  console.log(
    `median ratio with send / without: ${ratio.toFixed(2)}× (target ≥ ${TARGET_RATIO}×: ${ratio >= TARGET_RATIO ? 'met' : 'NOT met'})`,
  );
  console.log(
    `median ratio of main-thread CPU per answer (without / with; the req/s ratio on a machine with cores to spare): ${median(cpuRatios).toFixed(2)}×`,
  );

  const left = await drained();
  const before = await received();
  const countsBefore = await webhookCounts();
  const started = performance.now();
  const offered = (await load('/send', SUSTAIN)).rps;
  const seconds = (performance.now() - started) / 1000;
  const got = (await received()) - before;
  const countsAfter = await webhookCounts();
  const rate = got / seconds;
  const dropped = (countsAfter.failed ?? 0) - (countsBefore.failed ?? 0);
  console.log(
    `sustained over ${seconds.toFixed(1)} s: ${offered.toFixed(0)} events/s produced (answers with a send), ${rate.toFixed(0)} deliveries/s received (target ≥ ${TARGET_RATE}/s: ${rate >= TARGET_RATE ? 'met' : 'NOT met'}); at the end ${countsAfter.pending} pending, ${dropped} failed or dropped${left > 0 ? ` (${left} were pending before)` : ''}`,
  );
  const drainStart = performance.now();
  const still = await drained();
  console.log(
    `the rest delivered in ${((performance.now() - drainStart) / 1000).toFixed(1)} s${still > 0 ? ` (${still} still pending after 60 s)` : ''}`,
  );
} finally {
  server.proc.kill('SIGTERM');
  receiver.proc.kill('SIGTERM');
  await new Promise((r) => server.proc.once('exit', r));
  rmSync(dir, { recursive: true, force: true });
}
