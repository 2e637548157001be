// The resources figures as the server's own CPU time per request, on a machine too loaded for
// req/s alone: one server (the resources scenario's config, 100,000 events, the static answers of
// the same size), each load in turn for `--seconds` (default 1 s), `--rounds` times (default 12,
// the first two unmeasured); for each figure, the requests and the server's main-thread CPU time
// (/proc/<pid>/schedstat, Linux) summed over the rounds. Not part of `npm run bench`.
//
//   node bench/resources-cpu.js [--cli <bin/mockapi.js>] [--rounds 12] [--seconds 1]
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { request } from 'node:http';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import autocannon from 'autocannon';
import { API_KEY, RESOURCES_CREATE_BODY, resourcesYaml } from './configs.js';

const { values } = parseArgs({
  options: { cli: { type: 'string' }, rounds: { type: 'string' }, seconds: { type: 'string' } },
});
const CLI = resolve(values.cli ?? new URL('../bin/mockapi.js', import.meta.url).pathname);
const ROUNDS = Number(values.rounds ?? 12);
const SECONDS = Number(values.seconds ?? 1);
const KEY = API_KEY;
const BODY = RESOURCES_CREATE_BODY;
const YAML = resourcesYaml();
const LOADS = {
  create: ['POST', '/v1/customers'],
  'static-create': ['POST', '/static/customers'],
  retrieve: ['GET', '/v1/customers/cus_bench'],
  'static-retrieve': ['GET', '/static/customer'],
  page: ['GET', '/v1/events?limit=10'],
  'static-page': ['GET', '/static/page'],
};

const file = join(mkdtempSync(join(tmpdir(), 'mockapi-resources-cpu-')), 'resources.yaml');
writeFileSync(file, YAML);
const server = spawn(process.execPath, [CLI, 'serve', '-c', file, '--port', '0', '--no-state', '--log', 'off'], {
  stdio: ['ignore', 'pipe', 'inherit'],
});
const url = await new Promise((done) => {
  let out = '';
  server.stdout.on('data', (chunk) => {
    out += chunk;
    const m = /listening on (http:\/\/[^\s]+)/.exec(out);
    if (m !== null) done(m[1].replace(/\/$/, ''));
  });
});
const cpuNs = () => Number(readFileSync(`/proc/${server.pid}/schedstat`, 'utf8').split(' ')[0]);

function send(method, path, body, type = 'application/x-www-form-urlencoded') {
  return new Promise((done, fail) => {
    const headers = { 'x-api-key': KEY };
    if (body !== undefined) Object.assign(headers, { 'content-type': type, 'content-length': Buffer.byteLength(body) });
    const req = request(`${url}${path}`, { method, headers }, (res) => {
      let text = '';
      res.on('data', (d) => (text += d));
      res.on('end', () => done({ status: res.statusCode, body: text }));
    });
    req.on('error', fail);
    req.end(body);
  });
}

const events = Array.from({ length: 100_000 }, (_, i) => ({
  id: `evt_${String(i).padStart(8, '0')}`,
  type: 'invoice.paid',
  n: i,
}));
await send('PUT', '/__mockapi/resources/events', JSON.stringify(events), 'application/json');
const bodies = {
  retrieve: (await send('GET', '/v1/customers/cus_bench')).body,
  page: (await send('GET', '/v1/events?limit=10')).body,
  create: (await send('POST', '/v1/customers', BODY)).body,
};
writeFileSync(
  file,
  `${YAML}endpoints:
  - { method: GET, path: /static/customer, response: { body: ${bodies.retrieve} } }
  - { method: GET, path: /static/page, response: { body: ${bodies.page} } }
  - { method: POST, path: /static/customers, response: { body: ${bodies.create} } }
`,
);
while ((await send('GET', '/static/customer')).status !== 200) await new Promise((r) => setTimeout(r, 100));

const sums = Object.fromEntries(Object.keys(LOADS).map((name) => [name, { requests: 0, ns: 0 }]));
for (let round = 0; round < ROUNDS; round++) {
  const names = round % 2 === 0 ? Object.keys(LOADS) : Object.keys(LOADS).reverse();
  for (const name of names) {
    const [method, path] = LOADS[name];
    const before = cpuNs();
    const result = await autocannon({
      url: `${url}${path}`,
      method,
      connections: 50,
      duration: SECONDS,
      headers: {
        'x-api-key': KEY,
        ...(method === 'POST' ? { 'content-type': 'application/x-www-form-urlencoded' } : {}),
      },
      ...(method === 'POST' ? { body: BODY } : {}),
    });
    if (result.non2xx + result.errors > 0)
      throw new Error(`${name}: ${result.non2xx} non-2xx, ${result.errors} errors`);
    if (round < 2) continue; // warm-up
    sums[name].requests += result.requests.total;
    sums[name].ns += cpuNs() - before;
  }
}
server.kill('SIGTERM');
for (const name of ['create', 'retrieve', 'page']) {
  const own = sums[name].ns / sums[name].requests / 1000;
  const base = sums[`static-${name}`].ns / sums[`static-${name}`].requests / 1000;
  const rps = (n) => sums[n].requests / ((ROUNDS - 2) * SECONDS);
  console.log(
    `${name}: ${own.toFixed(1)} µs CPU per request vs ${base.toFixed(1)} static (${(base / own).toFixed(2)}×); ` +
      `${Math.round(rps(name))} vs ${Math.round(rps(`static-${name}`))} req/s (${(rps(name) / rps(`static-${name}`)).toFixed(2)}×)`,
  );
}
