// Resources against static answers of the same size, in the same server and the same interleaved
// rounds (bench/run.js --only resources): a retrieve, a page of 10 from a collection of 100,000
// objects, a create; and the memory 100,000 small objects add.
import { readFileSync, writeFileSync } from 'node:fs';
import { request } from 'node:http';
import { join } from 'node:path';
import { RESOURCES_CREATE_BODY, resourcesYaml } from '../configs.js';
import { runLoad } from '../load.js';
import { CLI, opts, CLIENT_CORE, progress, AUTH } from '../lib/options.js';
import { startServer, fetchText, median, rssMb, sleep } from '../lib/processes.js';
import { record, fmtRps, fmtMb } from '../lib/report.js';
import { interleavedRounds } from '../lib/rounds.js';

const OBJECTS = 100_000;
const CREATE_BODY = RESOURCES_CREATE_BODY;

/** An admin call with a JSON body; resolves with the status. */
function admin(url, method, path, body) {
  return new Promise((resolve, reject) => {
    const text = JSON.stringify(body);
    const req = request(
      `${url}/__mockapi/${path}`,
      { method, headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) } },
      (res) => {
        res.resume();
        res.on('end', () => resolve(res.statusCode));
      },
    );
    req.on('error', reject);
    req.end(text);
  });
}

function post(url, body, headers) {
  return new Promise((resolve, reject) => {
    const req = request(
      url,
      {
        method: 'POST',
        headers: {
          ...headers,
          'content-type': 'application/x-www-form-urlencoded',
          'content-length': Buffer.byteLength(body),
        },
      },
      (res) => {
        let text = '';
        res.on('data', (d) => (text += d));
        res.on('end', () => resolve({ status: res.statusCode, body: text }));
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}

/** The config with endpoints answering exactly these bodies, added by a hot reload (the objects stay). */
function withStatics(text, bodies) {
  return `${text}endpoints:
  - method: GET
    path: /static/customer
    response: { body: ${bodies.retrieve} }
  - method: GET
    path: /static/page
    response: { body: ${bodies.page} }
  - method: POST
    path: /static/customers
    response: { body: ${bodies.create} }
`;
}

export async function resourcesScenario(dir) {
  const file = join(dir, 'resources.yaml');
  writeFileSync(file, resourcesYaml());
  const server = await startServer('mockapi resources', [
    CLI,
    'serve',
    '-c',
    file,
    '--port',
    '0',
    '--no-state',
    '--log',
    'off',
  ]);
  const small = Array.from({ length: OBJECTS }, (_, i) => ({
    id: `evt_${String(i).padStart(8, '0')}`,
    type: 'invoice.paid',
    n: i,
  }));
  await sleep(2000);
  const before = rssMb(server.pid);
  const put = await admin(server.url, 'PUT', 'resources/events', small);
  if (put !== 200) throw new Error(`loading ${OBJECTS} objects: ${put}`);
  await sleep(2000);
  const after = rssMb(server.pid);
  if (before !== undefined && after !== undefined) {
    record(
      `resources: ${OBJECTS.toLocaleString('en-US')} small objects add`,
      fmtMb(after - before),
      { value: after - before, max: 150, unit: ' MB' },
      `RSS ${fmtMb(before)} → ${fmtMb(after)}`,
    );
  }
  const retrieve = await fetchText(`${server.url}/v1/customers/cus_bench`, AUTH);
  const page = await fetchText(`${server.url}/v1/events?limit=10`, AUTH);
  const created = await post(`${server.url}/v1/customers`, CREATE_BODY, AUTH);
  for (const [name, answer] of [
    ['retrieve', retrieve],
    ['page', page],
    ['create', created],
  ])
    if (answer.status !== 200) throw new Error(`${name}: ${answer.status} ${answer.body}`);
  if (JSON.parse(page.body).data.length !== 10)
    throw new Error(`the page holds ${JSON.parse(page.body).data.length} objects`);
  writeFileSync(
    file,
    withStatics(readFileSync(file, 'utf8'), { retrieve: retrieve.body, page: page.body, create: created.body }),
  );
  for (let tries = 0; (await fetchText(`${server.url}/static/customer`, AUTH)).status !== 200; tries++) {
    if (tries > 100) throw new Error('the static endpoints did not appear after the reload');
    await sleep(100);
  }

  const form = { ...AUTH, 'content-type': 'application/x-www-form-urlencoded' };
  const loads = [
    {
      key: 'retrieve',
      label: 'retrieve (GET /v1/customers/:id)',
      path: '/v1/customers/cus_bench',
      baseline: 'static-retrieve',
      min: 0.9,
    },
    { key: 'static-retrieve', label: 'static answer of the same size', path: '/static/customer' },
    {
      key: 'page',
      label: `a page of 10 from ${OBJECTS.toLocaleString('en-US')} objects`,
      path: '/v1/events?limit=10',
      baseline: 'static-page',
      min: 0.8,
    },
    { key: 'static-page', label: 'static answer of the same size', path: '/static/page' },
    {
      key: 'create',
      label: 'create (POST /v1/customers, form body)',
      path: '/v1/customers',
      method: 'POST',
      baseline: 'static-create',
      min: 0.7,
    },
    { key: 'static-create', label: 'static POST answer of the same size', path: '/static/customers', method: 'POST' },
  ];
  const load = (l, durationS) =>
    runLoad({
      tool: opts.tool,
      url: `${server.url}${l.path}`,
      headers: l.method === 'POST' ? form : AUTH,
      durationS,
      connections: opts.connections,
      pinCore: CLIENT_CORE,
      ...(l.method === undefined ? {} : { method: l.method, body: CREATE_BODY }),
    });
  const runs = await interleavedRounds('resources', loads, load);
  const count = JSON.parse((await fetchText(`${server.url}/__mockapi/resources`, {})).body).resources;
  await server.stop();
  for (const l of loads.filter((x) => x.baseline !== undefined)) {
    const ratios = runs[l.key].map((r, i) => r.rps / runs[l.baseline][i].rps);
    const bad = [...runs[l.key], ...runs[l.baseline]].reduce((sum, r) => sum + r.non2xx + r.errors, 0);
    record(
      `resources: ${l.label}`,
      fmtRps(median(runs[l.key].map((r) => r.rps))),
      { ratio: median(ratios), min: l.min, invalid: bad > 0 },
      bad > 0
        ? `${bad} non-2xx or errors`
        : `against ${fmtRps(median(runs[l.baseline].map((r) => r.rps)))} static; ratio per round: ${ratios.map((x) => x.toFixed(2)).join(' / ')}`,
    );
  }
  progress(`resources: the collections held ${count.map((c) => `${c.name} ${c.count}`).join(', ')} at the end`);
}

/**
 * Resources under `serve --workers 2` without a store: the primary holds the objects and each
 * worker asks it over IPC. A retrieve against a static answer of the same size in the same server
 * (which answers in the worker, with no IPC), in interleaved rounds. No target: what the round trip
 * to the primary costs, for a user choosing between it and `--store`.
 */
export async function resourcesWorkersScenario(dir) {
  const file = join(dir, 'resources-workers.yaml');
  // Without the limits (under --workers they need a store): the objects alone go through the primary.
  const base = resourcesYaml().replace(/^limits:\n(?: {2}.*\n)+/m, '');
  if (base.includes('limits:')) throw new Error('the resources config kept its limits');
  writeFileSync(file, base);
  const args = [CLI, 'serve', '-c', file, '--port', '0', '--no-state', '--log', 'off', '--workers', '2'];
  let server = await startServer('mockapi resources --workers 2', args);
  const retrieve = await fetchText(`${server.url}/v1/customers/cus_bench`, AUTH);
  if (retrieve.status !== 200) throw new Error(`retrieve under --workers: ${retrieve.status} ${retrieve.body}`);
  await server.stop();
  // The static twin written before the start (each worker reads the file at its start).
  writeFileSync(file, withStatics(base, { retrieve: retrieve.body, page: '{}', create: '{}' }));
  server = await startServer('mockapi resources --workers 2', args);
  const loads = [
    { key: 'retrieve', label: '--workers 2 retrieve', path: '/v1/customers/cus_bench' },
    { key: 'static', label: '--workers 2 static', path: '/static/customer' },
  ];
  for (const l of loads) {
    const answer = await fetchText(`${server.url}${l.path}`, AUTH);
    if (answer.status !== 200 || answer.body !== retrieve.body)
      throw new Error(`${l.key} under --workers: ${answer.status} ${answer.body}`);
  }
  const load = (l, durationS) =>
    runLoad({
      tool: opts.tool,
      url: `${server.url}${l.path}`,
      headers: AUTH,
      durationS,
      connections: opts.connections,
      pinCore: CLIENT_CORE,
    });
  const runs = await interleavedRounds('resources --workers 2', loads, load);
  await server.stop();
  const ratios = runs.retrieve.map((r, i) => r.rps / runs.static[i].rps);
  const bad = [...runs.retrieve, ...runs.static].reduce((sum, r) => sum + r.non2xx + r.errors, 0);
  record(
    'resources: retrieve under --workers 2 without a store (objects in the primary, over IPC)',
    fmtRps(median(runs.retrieve.map((r) => r.rps))),
    { ratio: median(ratios) },
    bad > 0
      ? `${bad} non-2xx or errors`
      : `no target: against ${fmtRps(median(runs.static.map((r) => r.rps)))} static in the same workers; ratio per round: ${ratios.map((x) => x.toFixed(2)).join(' / ')}`,
  );
}
