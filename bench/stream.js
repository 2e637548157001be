#!/usr/bin/env node
// Streamed answers: (1) streams with `gap: 0` against a plain body of the same bytes and against
// the same stream under a `slow` fault; (2) 1,000 concurrent open streams and the server's RSS.
// Only 127.0.0.1; every load is bounded. Run after `npm run build`:
//
//   node bench/stream.js [--requests 2000] [--open 1000]
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { Agent, request } from 'undici';

const { values } = parseArgs({ options: { requests: { type: 'string', default: '2000' }, open: { type: 'string', default: '1000' } } });
const REQUESTS = Number(values.requests);
const OPEN = Number(values.open);
const KEY = 'mk_benchStream00000000000000000001';
const CLI = fileURLToPath(new URL('../bin/mockapi.js', import.meta.url));
const EVENTS = 50;
const event = (i) => `{ data: { index: ${i}, text: "token number ${i} of the answer" } }`;
const events = Array.from({ length: EVENTS }, (_, i) => event(i)).join(', ');
const plainBody = Array.from({ length: EVENTS }, (_, i) => `data: {"index":${i},"text":"token number ${i} of the answer"}\n\n`).join('');

const CONFIG = `apiKey: ${KEY}
server: { journal: 0 }
endpoints:
  - method: GET
    path: /plain
    response: { headers: { content-type: text/event-stream }, body: ${JSON.stringify(plainBody)} }
  - method: GET
    path: /dynamic
    response: { headers: { content-type: text/event-stream, x-n: "\${request}" }, body: ${JSON.stringify(plainBody)} }
  - method: GET
    path: /stream
    response: { stream: { gap: 0, events: [${events}] } }
  - method: GET
    path: /slow
    faults: [{ kind: slow, rate: 1, bytesPerSecond: 1000000 }]
    response: { stream: { gap: 0, events: [${events}] } }
  - method: GET
    path: /open
    response: { stream: { gap: 1s, events: [${events}] } }
`;

async function serve() {
  const dir = await mkdtemp(join(tmpdir(), 'mockapi-bench-stream-'));
  await writeFile(join(dir, 'mockapi.yaml'), CONFIG);
  const child = spawn(process.execPath, [CLI, 'serve', '--port', '0', '--no-state', '--no-watch', '--log', 'off', '-c', join(dir, 'mockapi.yaml')], { stdio: ['ignore', 'pipe', 'pipe'] });
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

function rssMiB(pid) {
  const kb = Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))[1]);
  return kb / 1024;
}

async function load(url, path, count, concurrency = 50) {
  const agent = new Agent({ connections: concurrency });
  let next = 0;
  const started = performance.now();
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next < count) {
        next++;
        const res = await request(`${url}/mock${path}`, { headers: { 'x-api-key': KEY }, dispatcher: agent });
        await res.body.text();
      }
    }),
  );
  const seconds = (performance.now() - started) / 1000;
  await agent.close();
  return count / seconds;
}

const { child, url } = await serve();
try {
  await load(url, '/plain', 200);
  await load(url, '/stream', 200);
  // Interleaved rounds; the median of each counts.
  const plains = [];
  const dynamics = [];
  const streams = [];
  for (let round = 0; round < 5; round++) {
    plains.push(await load(url, '/plain', REQUESTS));
    dynamics.push(await load(url, '/dynamic', REQUESTS));
    streams.push(await load(url, '/stream', REQUESTS));
  }
  const median = (list) => [...list].sort((a, b) => a - b)[Math.floor(list.length / 2)];
  const plain = median(plains);
  const stream = median(streams);
  const dynamic = median(dynamics);
  const slow = await load(url, '/slow', Math.min(REQUESTS, 200));
  console.log(`${EVENTS}-event answer (${plainBody.length} bytes), ${REQUESTS} requests, 50 at a time, median of 5 interleaved rounds:`);
  console.log(`  plain body         ${plain.toFixed(0)} req/s`);
  console.log(`  same body, dynamic ${dynamic.toFixed(0)} req/s (${(dynamic / plain).toFixed(2)}×; an answer with an expression)`);
  console.log(`  stream, gap: 0     ${stream.toFixed(0)} req/s (${(stream / plain).toFixed(2)}× the plain body, ${(stream / dynamic).toFixed(2)}× the dynamic one)`);
  console.log(`  stream, slow fault ${slow.toFixed(0)} req/s at 1 MB/s`);

  const before = rssMiB(child.pid);
  const agent = new Agent({ connections: OPEN });
  const controllers = [];
  await Promise.all(
    Array.from({ length: OPEN }, async () => {
      const controller = new AbortController();
      controllers.push(controller);
      const res = await request(`${url}/mock/open`, { headers: { 'x-api-key': KEY }, dispatcher: agent, signal: controller.signal });
      await res.body[Symbol.asyncIterator]().next(); // the first event: the stream is open
    }),
  );
  const during = rssMiB(child.pid);
  for (const c of controllers) c.abort();
  await agent.close().catch(() => undefined);
  console.log(`${OPEN} concurrent open streams: RSS ${before.toFixed(1)} MiB before, ${during.toFixed(1)} MiB open (${(((during - before) * 1024) / OPEN).toFixed(1)} KiB a stream)`);
} finally {
  child.kill('SIGTERM');
}
