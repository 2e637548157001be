#!/usr/bin/env node
// What one delivery costs the thread that answers requests: `prepare` + `fire` (what an answer with
// a `send` runs), the hand-over to the delivery thread and the outcome coming back, as CPU time of
// this process's main thread per delivery (from /proc: Linux only). The real delivery thread sends
// to a receiver in a child process. Given two builds (each a checkout with dist/ built), it measures
// them in the same process, in interleaved rounds, so that a busy machine slows both alike:
//
//   node bench/webhooks-thread-cost.js [--old <checkout>] [--deliveries 20000] [--rounds 4] [--pending 2000]
//
// --old: a checkout of an earlier commit, built (`git worktree add /tmp/old <commit> && cd /tmp/old && npm ci`).
// --pending: how many deliveries may be pending before the driver waits for them (the server holds up to 10,000).
// --sender fake: no delivery thread and no receiver; each attempt is answered 200 on the next turn
// with a signature header, so that only this thread's own work is measured (no thread competes for
// the cores, which on two cores moves the figure more than the change measured).
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';

const { values } = parseArgs({
  options: {
    sender: { type: 'string', default: 'thread' },
    old: { type: 'string' },
    deliveries: { type: 'string', default: '20000' },
    rounds: { type: 'string', default: '4' },
    pending: { type: 'string', default: '2000' },
  },
});
const N = Number(values.deliveries);
const ROUNDS = Number(values.rounds);
const HOLD = Number(values.pending);
const PER_TURN = 32; // answers with a send per turn of the event loop, as 32 connections make them
const roots = [
  ...(values.old === undefined ? [] : [resolve(values.old)]),
  fileURLToPath(new URL('..', import.meta.url)),
];

const receiver = spawn(
  process.execPath,
  [
    '-e',
    `require('node:http').createServer((q, s) => { q.resume(); q.on('end', () => s.writeHead(204).end()); }).listen(0, '127.0.0.1', function () { console.log('receiver ' + this.address().port); });`,
  ],
  { stdio: ['ignore', 'pipe', 'inherit'] },
);
const port = await new Promise((done) =>
  receiver.stdout.on('data', (d) => {
    const m = /receiver (\d+)/.exec(String(d));
    if (m) done(m[1]);
  }),
);
/** CPU milliseconds of this process's main thread. */
const cpuMs = () => {
  const f = readFileSync(`/proc/self/task/${process.pid}/stat`, 'utf8')
    .replace(/^.*\) /s, '')
    .split(' ');
  return (Number(f[11]) + Number(f[12])) * 10;
};

/** Answers every attempt 200 on the next turn, with a header as the real sender reports it. */
function fakeSender(report) {
  let waiting = [];
  let soon;
  const flush = () => {
    soon = undefined;
    const batch = waiting;
    waiting = [];
    report(
      batch.map((r) => ({
        id: r.id,
        headers: {
          'content-type': 'application/json',
          'user-agent': 'mockapi-webhooks',
          'stripe-signature': `t=${r.timestamp},v1=5257a869e7ecebeda32affa62cdca3fa51cad7e77a0e56ff536d0ce8e108d8bd`,
        },
        result: { status: 200, ms: 1 },
      })),
    );
  };
  return {
    send(batch) {
      for (const r of batch) waiting.push(r);
      soon ??= setImmediate(flush);
    },
    close() {
      if (soon !== undefined) clearImmediate(soon);
    },
  };
}

const builds = [];
for (const root of roots) {
  const load = (file) => import(pathToFileURL(`${root}/dist/${file}`).href);
  const [{ createWebhookService }, { compileWebhooks, compileSends, emptyContext }, { buildWebhooks, buildSend }] =
    await Promise.all([load('webhooks/service.js'), load('webhooks/compile.js'), load('config/build-webhooks.js')]);
  const raw = {
    targets: {
      app: {
        url: `http://127.0.0.1:${port}/hook`,
        sign: { scheme: 'stripe', secret: 'whsec_bench_secret' },
        retry: { schedule: 'standard', timeout: '10s' },
      },
    },
    events: {
      'charge.succeeded': {
        envelope: 'stripe',
        data: { object: { id: 'ch_1', object: 'charge', status: 'succeeded' } },
      },
    },
  };
  const holder = {
    current: {
      webhooks: compileWebhooks(buildWebhooks(raw), { env: {} }),
      config: { server: { journal: 1000 } },
      redactor: { scrub: (s) => s },
    },
  };
  const service = createWebhookService({
    holder,
    clock: Date.now,
    seed: () => 1,
    ...(values.sender === 'fake' ? { sender: fakeSender } : {}),
  });
  const sends = compileSends(buildSend([{ event: 'charge.succeeded', to: 'app' }]), { env: {} });
  const rendered = { status: 200, body: Buffer.from('{"id":"ch_1","object":"charge","amount":500}') };
  builds.push({ name: root, service, sends, rendered, ctx: emptyContext(Date.now()) });
}

const turn = () => new Promise((r) => setImmediate(r));
async function run({ service, sends, rendered, ctx }) {
  await service.drain(60_000);
  const before = cpuMs();
  for (let i = 0; i < N; i += PER_TURN) {
    for (let j = 0; j < PER_TURN; j++) service.fire(service.prepare(sends, ctx, rendered, 'GET /send'));
    await turn(); // the turn's attempts go to the delivery thread in one message
    if (service.pending() > HOLD) await service.drain(60_000);
  }
  await service.drain(60_000);
  return ((cpuMs() - before) * 1000) / N;
}

const median = (list) => [...list].sort((a, b) => a - b)[Math.floor(list.length / 2)];
try {
  for (const build of builds) await run(build); // warm-up
  const seen = builds.map(() => []);
  for (let round = 1; round <= ROUNDS; round++) {
    const order = round % 2 === 1 ? builds.map((_, i) => i) : builds.map((_, i) => i).reverse();
    for (const i of order) seen[i].push(await run(builds[i]));
    console.log(
      `round ${round}: ${builds.map((b, i) => `${b.name} ${seen[i].at(-1).toFixed(1)} µs`).join(', ')} (main-thread CPU per delivery)`,
    );
  }
  console.log(
    `median main-thread CPU per delivery: ${builds.map((b, i) => `${b.name} ${median(seen[i]).toFixed(1)} µs`).join(', ')}`,
  );
} finally {
  for (const build of builds) build.service.close();
  receiver.kill();
}
