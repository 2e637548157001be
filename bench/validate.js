#!/usr/bin/env node
// Request validation's cost: requests per second of one endpoint (POST with a small JSON body
// checked against its operation) served by two servers whose configs differ only in
// `openapi.validate.requests` (report vs off), in interleaved rounds in one run. Prints each
// round, the median ratio validated/unvalidated and PASS/FAIL against the target (at least 0.70).
// Where /proc is there (Linux), each round also gives each server's CPU time per request, a figure a
// busy machine disturbs less than requests per second (the load generator shares the machine).
// Exits 0 either way: on a busy machine the figure is only indicative.
//   npm run build && node bench/validate.js [seconds per round, default 5] [rounds, default 5]
import { execFileSync, spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import autocannon from 'autocannon';

const TARGET = 0.7;
const root = fileURLToPath(new URL('..', import.meta.url));
const KEY = 'mk_benchValidate000000000000000001';
const seconds = Number(process.argv[2] ?? 5);
const roundCount = Number(process.argv[3] ?? 5);
if (!(seconds > 0) || !Number.isInteger(roundCount) || roundCount < 1) {
  console.error('usage: node bench/validate.js [seconds per round > 0] [rounds ≥ 1]');
  process.exit(2);
}
const dir = mkdtempSync(join(tmpdir(), 'mockapi-bench-validate-'));
writeFileSync(
  join(dir, 'openapi.yaml'),
  `openapi: 3.0.3
info: { title: bench, version: '1' }
paths:
  /charges:
    post:
      requestBody:
        required: true
        content:
          application/json:
            schema:
              type: object
              required: [amount, currency]
              properties:
                amount: { type: integer, minimum: 1 }
                currency: { type: string, enum: [usd, eur] }
                receipt_email: { type: string, format: email }
                metadata: { type: object, additionalProperties: { type: string } }
      responses: { '200': { description: ok } }
`,
);
const config = (mode) => `apiKey: ${KEY}
openapi:
  spec: ./openapi.yaml
  validate: { requests: ${mode} }
endpoints:
  - method: POST
    path: /charges
    openapi: POST /charges
    response: { body: { id: ch_1 } }
`;
writeFileSync(join(dir, 'validated.yaml'), config('report'));
writeFileSync(join(dir, 'unvalidated.yaml'), config('off'));

const children = [];
/** Clock ticks per second of /proc's CPU times. */
const ticksPerSecond = (() => {
  try {
    return Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim()) || 100;
  } catch {
    return 100;
  }
})();
/** CPU time (user + system) a process has used, in µs; undefined without /proc. */
function cpuMicros(pid) {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return ((Number(fields[11]) + Number(fields[12])) * 1e6) / ticksPerSecond;
  } catch {
    return undefined;
  }
}

/** Starts a server; resolves to its URL and pid. */
async function serve(file) {
  const child = spawn(
    process.execPath,
    [
      join(root, 'bin/mockapi.js'),
      'serve',
      '-c',
      join(dir, file),
      '--port',
      '0',
      '--log',
      'off',
      '--no-state',
      '--no-watch',
    ],
    { stdio: ['ignore', 'pipe', 'pipe'] },
  );
  children.push(child);
  let errors = ''; // shown only when the server does not start (its stop messages are noise here)
  child.stderr.on('data', (d) => (errors += d));
  return new Promise((resolve, reject) => {
    let out = '';
    child.stdout.on('data', (d) => {
      out += d;
      const m = /listening on (\S+)/.exec(out);
      if (m) resolve({ url: m[1], pid: child.pid });
    });
    child.once('exit', (code) => reject(new Error(`serve -c ${file} exited ${code}: ${errors}`)));
  });
}

const body = JSON.stringify({
  amount: 500,
  currency: 'usd',
  receipt_email: 'ada@example.com',
  metadata: { order_id: '42' },
});
const headers = { 'x-api-key': KEY, 'content-type': 'application/json' };

/** One request, and what its journal entry says: validated requests carry a `violations` list. */
async function probe(url) {
  const res = await fetch(`${url}/mock/charges`, { method: 'POST', headers, body });
  await res.text();
  if (res.status !== 200 || res.headers.has('x-mockapi-violations'))
    throw new Error(`${url}: ${res.status}, violations ${res.headers.get('x-mockapi-violations')}`);
  const journal = await (await fetch(`${url}/__mockapi/requests?limit=1`, { headers: { 'x-api-key': KEY } })).json();
  return journal.requests[0]?.violations;
}

/** Requests per second a server answers for `duration` s, and its CPU µs per request (undefined without /proc). */
async function rate({ url, pid }, duration) {
  const before = cpuMicros(pid);
  const result = await autocannon({
    url: `${url}/mock/charges`,
    method: 'POST',
    connections: 10,
    duration,
    headers,
    body,
  });
  const after = cpuMicros(pid);
  if (result.non2xx > 0 || result.errors > 0)
    throw new Error(`${url}: ${result.non2xx} answers were not 2xx, ${result.errors} errors`);
  const cpu =
    before === undefined || after === undefined || result.requests.total === 0
      ? undefined
      : (after - before) / result.requests.total;
  return { perSecond: result.requests.average, cpu };
}

const median = (list) => {
  const sorted = [...list].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
};

try {
  const validated = await serve('validated.yaml');
  const unvalidated = await serve('unvalidated.yaml');
  // The same endpoint: validated on one server (its journal entry has `violations: []`), not on the other.
  if (!Array.isArray(await probe(validated.url))) throw new Error('the validated server did not validate the request');
  if ((await probe(unvalidated.url)) !== undefined) throw new Error('the unvalidated server validated the request');
  // Warm-up: compiles the operation's schema, lets the JIT settle.
  await rate(validated, Math.min(2, seconds));
  await rate(unvalidated, Math.min(2, seconds));

  console.log(
    `POST /mock/charges with a ${body.length}-byte JSON body, 10 connections, ${roundCount} interleaved rounds of ${seconds} s:`,
  );
  const ratios = [];
  const cpuRatios = [];
  for (let round = 1; round <= roundCount; round++) {
    // Alternate which goes first, so a drift of the machine's speed does not favour one.
    const order = round % 2 === 1 ? ['unvalidated', 'validated'] : ['validated', 'unvalidated'];
    const rates = {};
    for (const which of order) rates[which] = await rate(which === 'validated' ? validated : unvalidated, seconds);
    const ratio = rates.validated.perSecond / rates.unvalidated.perSecond;
    ratios.push(ratio);
    let cpu = '';
    if (rates.validated.cpu !== undefined && rates.unvalidated.cpu !== undefined) {
      cpuRatios.push(rates.unvalidated.cpu / rates.validated.cpu);
      cpu = `; server CPU per request: unvalidated ${rates.unvalidated.cpu.toFixed(1)} µs, validated ${rates.validated.cpu.toFixed(1)} µs`;
    }
    console.log(
      `  round ${round}: unvalidated ${Math.round(rates.unvalidated.perSecond)} req/s, validated ${Math.round(rates.validated.perSecond)} req/s, ratio ${ratio.toFixed(2)}${cpu}`,
    );
  }
  const ratio = median(ratios);
  console.log(
    `median ratio validated/unvalidated ${ratio.toFixed(2)} (target ≥ ${TARGET.toFixed(2)}): ${ratio >= TARGET ? 'PASS' : 'FAIL'}`,
  );
  // The same ratio from CPU time: what the requests per second would be if the server alone had the machine.
  if (cpuRatios.length > 0)
    console.log(
      `median CPU ratio unvalidated/validated per request ${median(cpuRatios).toFixed(2)} (indicative; the target reads requests per second)`,
    );
} finally {
  for (const child of children) child.kill();
  rmSync(dir, { recursive: true, force: true });
}
