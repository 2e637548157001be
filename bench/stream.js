#!/usr/bin/env node
// Streamed answers, against two targets:
//
// (1) "a stream with `gap: 0` costs no more than a `slow` fault": the server's CPU time per answer
//     for a 50-event stream with `gap: 0`, against the same bytes sent under a `slow` fault (the
//     normal answer sent at `bytesPerSecond`), and the same for an openai-chat preset stream (framed
//     per request), in the same run and the same server, in interleaved rounds (the order turns
//     each round). Each round prints the costs and ratios; each median ratio is checked against
//     "no more than" (≤ 1.00). A plain body of the same bytes is measured
//     too, for context only. CPU time is the server process's, all its threads
//     (/proc/<pid>/task/*/schedstat, in nanoseconds), so the wall time of the slow fault's pause
//     does not count: only the work each answer costs. At the default --rate the slow fault sends
//     the whole body in one piece after one pause: the cheapest a slow fault can be (one timer, one
//     write), so the comparison is strict. The client's own work (reading chunks) never counts.
//     With --baseline <another checkout's bin/mockapi.js>, that build's server is measured in the
//     same rounds (its cases interleaved with this one's), for a before/after on one machine.
// (2) "1,000 concurrent open streams hold": a fresh server; --open streams with `gap: 1s` opened at
//     once; every one must deliver its first event, then its second one a second later (none
//     dropped); RSS before, at peak (VmHWM) and held, and per stream.
//
// Only 127.0.0.1; every load is bounded; exits 0 (figures taken on a busy machine are indicative).
// Run after `npm run build`:
//
//   node bench/stream.js [--requests 2000] [--rounds 7] [--concurrency 100] [--open 1000] [--rate 1000000] [--baseline <bin/mockapi.js>]
import { spawn } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { Agent, request } from 'undici';

const options = { requests: '2000', rounds: '7', concurrency: '100', open: '1000', rate: '1000000' };
const { values } = parseArgs({
  options: {
    ...Object.fromEntries(Object.entries(options).map(([k, v]) => [k, { type: 'string', default: v }])),
    baseline: { type: 'string' },
  },
});
const [REQUESTS, ROUNDS, CONCURRENCY, OPEN, RATE] = Object.keys(options).map((k) => Number(values[k]));
const BASELINE = values.baseline;
const KEY = 'mk_benchStream00000000000000000001';
const CLI = fileURLToPath(new URL('../bin/mockapi.js', import.meta.url));
const EVENTS = 50;
const event = (i) => `{ data: { index: ${i}, text: "token number ${i} of the answer" } }`;
const events = Array.from({ length: EVENTS }, (_, i) => event(i)).join(', ');
const plainBody = Array.from(
  { length: EVENTS },
  (_, i) => `data: {"index":${i},"text":"token number ${i} of the answer"}\n\n`,
).join('');

// The preset case: 48 words, so 51 events framed per request (an id per stream, the request's model).
const WORDS = Array.from({ length: 48 }, (_, i) => `word${i}`).join(' ');

const CONFIG = `apiKey: ${KEY}
server: { journal: 0 }
endpoints:
  - method: GET
    path: /plain
    response: { headers: { content-type: text/event-stream }, body: ${JSON.stringify(plainBody)} }
  - method: GET
    path: /stream
    response: { stream: { gap: 0, events: [${events}] } }
  - method: GET
    path: /slow
    faults: [{ kind: slow, rate: 1, bytesPerSecond: ${RATE} }]
    response: { stream: { gap: 0, events: [${events}] } }
  - method: POST
    path: /chat
    response: { stream: { preset: openai-chat, text: ${JSON.stringify(WORDS)}, gap: 0 } }
  - method: POST
    path: /chat-slow
    faults: [{ kind: slow, rate: 1, bytesPerSecond: ${RATE} }]
    response: { stream: { preset: openai-chat, text: ${JSON.stringify(WORDS)}, gap: 0 } }
  - method: GET
    path: /open
    response: { stream: { gap: 1s, events: [${events}] } }
`;

async function serve(cli = CLI) {
  const dir = await mkdtemp(join(tmpdir(), 'mockapi-bench-stream-'));
  await writeFile(join(dir, 'mockapi.yaml'), CONFIG);
  const child = spawn(
    process.execPath,
    [cli, 'serve', '--port', '0', '--no-state', '--no-watch', '--log', 'off', '-c', join(dir, 'mockapi.yaml')],
    { stdio: ['ignore', 'pipe', 'pipe'] },
  );
  const url = await new Promise((done, fail) => {
    let out = '';
    const look = (chunk) => {
      out += chunk;
      const m = /listening on (http:\/\/\S+)/.exec(out);
      if (m) done(m[1]);
    };
    child.stdout.on('data', look);
    child.stderr.on('data', look);
    child.once('exit', (code) => fail(new Error(`serve exited with ${code}: ${out}`)));
  });
  return { child, url };
}

/** The process's CPU time so far, all threads, in nanoseconds. */
function cpuNs(pid) {
  let total = 0;
  for (const task of readdirSync(`/proc/${pid}/task`)) {
    try {
      total += Number(readFileSync(`/proc/${pid}/task/${task}/schedstat`, 'utf8').split(' ')[0]);
    } catch {
      // a thread that ended between the listing and the read
    }
  }
  return total;
}

function statusMiB(pid, field) {
  const kb = Number(new RegExp(`${field}:\\s+(\\d+)`).exec(readFileSync(`/proc/${pid}/status`, 'utf8'))[1]);
  return kb / 1024;
}

/** Sends `count` requests to `path`, `concurrency` at a time; the server's CPU µs per answer. */
async function load(pid, url, path, count) {
  const agent = new Agent({ connections: CONCURRENCY });
  const post = path.startsWith('/chat');
  let next = 0;
  const sizes = new Set();
  const before = cpuNs(pid);
  await Promise.all(
    Array.from({ length: CONCURRENCY }, async () => {
      while (next < count) {
        next++;
        const res = await request(`${url}/mock${path}`, {
          method: post ? 'POST' : 'GET',
          headers: { 'x-api-key': KEY },
          dispatcher: agent,
          ...(post ? { body: '{"model":"m"}' } : {}),
        });
        sizes.add((await res.body.text()).length);
      }
    }),
  );
  const perAnswer = (cpuNs(pid) - before) / 1000 / count;
  await agent.close();
  if (sizes.size !== 1) throw new Error(`${path} answered ${[...sizes].join(', ')} bytes: not every answer was whole`);
  return perAnswer;
}

const median = (list) => [...list].sort((a, b) => a - b)[Math.floor(list.length / 2)];
const f1 = (n) => n.toFixed(1);

/** The pairs compared: a stream with `gap: 0` and the same stream under a `slow` fault. */
const PAIRS = [
  { name: `${EVENTS} explicit events`, stream: '/stream', slow: '/slow' },
  { name: 'openai-chat preset, 51 events', stream: '/chat', slow: '/chat-slow' },
];

async function costs() {
  const servers = [{ name: 'this build', ...(await serve()) }];
  if (BASELINE !== undefined) servers.push({ name: 'baseline', ...(await serve(BASELINE)) });
  try {
    const paths = [...PAIRS.flatMap((p) => [p.stream, p.slow]), '/plain'];
    // Every case: a server and a path; in each round the order turns.
    const cases = servers.flatMap((server) => paths.map((path) => ({ server, path })));
    for (const c of cases) await load(c.server.child.pid, c.server.url, c.path, Math.min(REQUESTS, 500)); // warm up
    for (const server of servers) {
      server.seen = Object.fromEntries(paths.map((p) => [p, []]));
      server.ratios = PAIRS.map(() => []);
    }
    console.log(
      `(1) server CPU per answer (all threads), ${REQUESTS} requests a case a round, ${CONCURRENCY} at a time, ${ROUNDS} interleaved rounds`,
    );
    console.log(
      `    stream = gap: 0; slow = the same stream under a slow fault at ${RATE} bytes/s; plain = a body of the ${plainBody.length} bytes of the explicit stream (context)`,
    );
    if (BASELINE !== undefined) console.log(`    baseline: ${BASELINE}, its cases interleaved with this build's`);
    for (let round = 0; round < ROUNDS; round++) {
      const order = cases.map((_, i) => cases[(i + round) % cases.length]);
      for (const c of order)
        (c.server.got ??= {})[c.path] = await load(c.server.child.pid, c.server.url, c.path, REQUESTS);
      for (const server of servers) {
        const { got } = server;
        for (const path of paths) server.seen[path].push(got[path]);
        const parts = PAIRS.map((pair, i) => {
          const ratio = got[pair.stream] / got[pair.slow];
          server.ratios[i].push(ratio);
          return `${pair.name}: stream ${f1(got[pair.stream])} µs, slow ${f1(got[pair.slow])} µs, ratio ${ratio.toFixed(2)}`;
        });
        console.log(
          `    round ${round + 1}${servers.length > 1 ? ` (${server.name})` : ''}: ${parts.join('; ')}; plain ${f1(got['/plain'])} µs`,
        );
      }
    }
    let pass = true;
    for (const server of servers) {
      const of = servers.length > 1 ? ` (${server.name})` : '';
      PAIRS.forEach((pair, i) => {
        const ratio = median(server.ratios[i]);
        if (server === servers[0]) pass &&= ratio <= 1;
        console.log(
          `    median${of}, ${pair.name}: stream ${f1(median(server.seen[pair.stream]))} µs, slow ${f1(median(server.seen[pair.slow]))} µs, stream/slow ${ratio.toFixed(2)} ${ratio <= 1 ? '≤' : '>'} 1.00`,
        );
      });
      console.log(`    median${of}, plain body: ${f1(median(server.seen['/plain']))} µs`);
    }
    if (servers.length > 1) {
      const [mine, base] = servers;
      const each = paths.map(
        (path) => `${path} ${median(mine.seen[path].map((v, k) => v / base.seen[path][k])).toFixed(2)}`,
      );
      console.log(`    this build / baseline, median of the rounds' ratios: ${each.join(', ')}`);
    }
    console.log(
      `    target "a stream with gap: 0 costs no more than a slow fault" (median stream/slow ≤ 1.00 for each): ${pass ? 'PASS' : 'FAIL'}`,
    );
  } finally {
    for (const server of servers) server.child.kill('SIGTERM');
  }
}

/** Reads `n` more chunks of a stream; false when it ended or broke first (a dropped stream). */
async function chunks(iterator, n) {
  try {
    for (let i = 0; i < n; i++) if ((await iterator.next()).done) return false;
    return true;
  } catch {
    return false;
  }
}

async function openStreams() {
  const { child, url } = await serve();
  const agent = new Agent({ connections: OPEN });
  const controllers = [];
  try {
    for (let i = 0; i < 20; i++)
      await (await request(`${url}/mock/plain`, { headers: { 'x-api-key': KEY } })).body.text(); // warm up
    const before = statusMiB(child.pid, 'VmRSS');
    const fdsBefore = readdirSync(`/proc/${child.pid}/fd`).length;
    const opened = performance.now();
    const streams = await Promise.all(
      Array.from({ length: OPEN }, async () => {
        const controller = new AbortController();
        controllers.push(controller);
        const res = await request(`${url}/mock/open`, {
          headers: { 'x-api-key': KEY },
          dispatcher: agent,
          signal: controller.signal,
        }).catch(() => undefined);
        if (res === undefined || res.statusCode !== 200) return { iterator: undefined, first: false };
        const iterator = res.body[Symbol.asyncIterator]();
        return { iterator, first: await chunks(iterator, 1) };
      }),
    );
    const firstMs = performance.now() - opened;
    const fdsOpen = readdirSync(`/proc/${child.pid}/fd`).length;
    // The second event comes a second later on every stream: none was dropped in between.
    const second = await Promise.all(streams.map((s) => (s.first ? chunks(s.iterator, 1) : false)));
    const held = statusMiB(child.pid, 'VmRSS');
    const peak = statusMiB(child.pid, 'VmHWM');
    const firsts = streams.filter((s) => s.first).length;
    const seconds = second.filter(Boolean).length;
    console.log(`(2) ${OPEN} concurrent open streams (gap: 1s), on a fresh server:`);
    console.log(
      `    first event: ${firsts} of ${OPEN} (all within ${Math.round(firstMs)} ms); second event 1 s later: ${seconds} of ${OPEN}; dropped: ${OPEN - seconds}`,
    );
    console.log(`    server fds ${fdsBefore} before, ${fdsOpen} open`);
    console.log(
      `    RSS ${f1(before)} MiB before, ${f1(peak)} MiB at peak, ${f1(held)} MiB held (${f1(((peak - before) * 1024) / OPEN)} KiB a stream at peak)`,
    );
    console.log(`    target "${OPEN} concurrent open streams hold": ${seconds === OPEN ? 'PASS' : 'FAIL'}`);
  } finally {
    for (const c of controllers) c.abort();
    await agent.close().catch(() => undefined);
    child.kill('SIGTERM');
  }
}

await costs();
await openStreams();
