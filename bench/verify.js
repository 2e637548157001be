// `mockapi verify` of 1,000 endpoints against a local upstream, against the same 1,000 requests sent
// by a plain HTTP client (node:http, keep-alive, the same concurrency): both whole processes, started
// alike, interleaved round by round; the median ratio counts (target ≤ 1.5×). The upstream is a
// node:http server in a process of its own (on the server core when pinned), answering at once.
//
//   node bench/verify.js [endpoints] [rounds] [concurrency]     (after a build; default 1000 5 4)
//   npm run bench -- --only verify                               (the same figure in the bench table)
import { spawn } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const UP_KEY = 'bench-upstream-key-abcdef';
const KEY = 'mk_benchVerify00000000000000000001';
/** The answer of every endpoint: the shape the mock has, other values. */
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

/** The plain client: the same requests, the same concurrency, each body read to its end. */
const CLIENT = `
const http = require('node:http');
const [url, n, concurrency] = [process.argv[1], Number(process.argv[2]), Number(process.argv[3])];
const agent = new http.Agent({ keepAlive: true, maxSockets: concurrency });
const get = (path) => new Promise((ok, ko) => http.get(url + path, { agent, headers: { authorization: 'Bearer ${UP_KEY}' } }, (res) => {
  const chunks = [];
  res.on('data', (c) => chunks.push(c));
  res.on('end', () => { JSON.parse(Buffer.concat(chunks).toString()); ok(); });
}).on('error', ko));
let next = 0;
const worker = async () => { while (next < n) { const i = next++; await get('/r' + i + '/items/' + i); } };
Promise.all(Array.from({ length: concurrency }, worker)).then(() => agent.destroy());
`;

function configYaml(upstream, n) {
  const lines = [`apiKey: ${KEY}`, 'upstream:', `  url: ${upstream}`, '  auth: { header: Authorization, value: "Bearer ${env.MOCKAPI_UP_KEY}" }', 'endpoints:'];
  for (let i = 0; i < n; i++) {
    lines.push(`  - recorded: GET /r${i}/items/:id`, '    method: GET', `    path: /r${i}/items/:id`, '    response:', `      body: ${JSON.stringify({ ...answerOf(i), name: `Thing ${i}` })}`, '    verify:', `      request: { params: { id: "${i}" } }`, '      expect: 200');
  }
  return `${lines.join('\n')}\n`;
}

/** Runs a node process to its end; its wall time in ms (and its exit code and output). */
function timed(args, env) {
  return new Promise((done, fail) => {
    const started = performance.now();
    const child = spawn(process.execPath, args, { env: { ...process.env, HTTP_PROXY: '', http_proxy: '', HTTPS_PROXY: '', https_proxy: '', ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    child.stdout.on('data', (d) => (out += d));
    child.stderr.on('data', (d) => (out += d));
    child.on('error', fail);
    child.on('close', (code) => done({ ms: performance.now() - started, code, out }));
  });
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

/**
 * The figure: median over `rounds` of (verify wall time) / (plain client wall time), each round
 * running both once (the order alternating). Returns the times and the ratio.
 */
export async function measureVerify({ endpoints = 1000, rounds = 5, concurrency = 4, pin } = {}) {
  const dir = await mkdtemp(join(tmpdir(), 'mockapi-bench-verify-'));
  const upstream = await startUpstream(pin);
  try {
    const config = join(dir, 'mockapi.yaml');
    await writeFile(config, configYaml(upstream.url, endpoints));
    const env = { MOCKAPI_UP_KEY: UP_KEY };
    const verifyArgs = [join(ROOT, 'bin', 'mockapi.js'), 'verify', '-c', config, '--concurrency', String(concurrency)];
    const clientArgs = ['-e', CLIENT, upstream.url, String(endpoints), String(concurrency)];
    // Warm-up (file cache, the upstream's JIT); and a check that every endpoint verifies the same.
    const first = await timed(verifyArgs, env);
    if (first.code !== 0 || !first.out.includes(`${endpoints} same, 0 drift, 0 failed`)) throw new Error(`verify did not report every endpoint the same:\n${first.out.slice(-2000)}`);
    await timed(clientArgs, env);
    const runs = [];
    for (let round = 0; round < rounds; round++) {
      const order = round % 2 === 0 ? ['client', 'verify'] : ['verify', 'client'];
      const run = {};
      for (const which of order) run[which] = (await timed(which === 'verify' ? verifyArgs : clientArgs, env)).ms;
      runs.push(run);
    }
    const ratios = runs.map((r) => r.verify / r.client).sort((a, b) => a - b);
    const med = (values) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];
    return { endpoints, concurrency, verifyMs: med(runs.map((r) => r.verify)), clientMs: med(runs.map((r) => r.client)), ratio: ratios[Math.floor(ratios.length / 2)], runs };
  } finally {
    upstream.stop();
    await rm(dir, { recursive: true, force: true });
  }
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const [endpoints, rounds, concurrency] = process.argv.slice(2).map(Number);
  const result = await measureVerify({ endpoints: endpoints || 1000, rounds: rounds || 5, concurrency: concurrency || 4 });
  for (const [i, r] of result.runs.entries()) console.log(`round ${i + 1}: plain client ${r.client.toFixed(0)} ms, mockapi verify ${r.verify.toFixed(0)} ms, ratio ${(r.verify / r.client).toFixed(2)}×`);
  console.log(`${result.endpoints} endpoints, concurrency ${result.concurrency}: plain client ${result.clientMs.toFixed(0)} ms, verify ${result.verifyMs.toFixed(0)} ms (medians); median ratio ${result.ratio.toFixed(2)}×`);
  console.log(`target ≤ 1.5×: ${result.ratio <= 1.5 ? 'PASS' : 'FAIL'}`);
}
