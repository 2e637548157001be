// What the proxy step adds to an upstream's own time on loopback: the same request, sequential on one
// keep-alive connection, straight to a node:http upstream and through `mockapi serve --upstream`.
// Run after a build: `node bench/upstream.js [requests per round] [rounds]`. Prints each round, the
// median and the verdict against the target (at most 1 ms added); exits 0 either way.
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const BIN = fileURLToPath(new URL('../bin/mockapi.js', import.meta.url));
const KEY = 'mk_benchUpstream0000000000000000001';
const PER_ROUND = Number(process.argv[2] ?? 2000);
const ROUNDS = Number(process.argv[3] ?? 7);
const body = JSON.stringify({ id: 1, name: 'Ada', email: 'ada@example.com' });

const upstream = http.createServer((_req, res) => {
  res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) });
  res.end(body);
});
await new Promise((done) => upstream.listen(0, '127.0.0.1', done));
const upstreamUrl = `http://127.0.0.1:${upstream.address().port}`;

const dir = mkdtempSync(join(tmpdir(), 'mockapi-bench-upstream-'));
writeFileSync(join(dir, 'mockapi.yaml'), `apiKey: ${KEY}\n`);
const env = { ...process.env, HTTP_PROXY: '', http_proxy: '', HTTPS_PROXY: '', https_proxy: '' };
const child = spawn(
  process.execPath,
  [
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
    '--upstream',
    upstreamUrl,
  ],
  { stdio: ['ignore', 'pipe', 'inherit'], env },
);
const mockUrl = await new Promise((done) =>
  child.stdout.on('data', (d) => {
    const m = /listening on (\S+)/.exec(String(d));
    if (m) done(m[1]);
  }),
);

const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
const get = (url, headers) =>
  new Promise((ok, ko) => http.get(url, { agent, headers }, (res) => res.resume().on('end', ok)).on('error', ko));
async function perRequestMs(url, headers, n) {
  const start = performance.now();
  for (let i = 0; i < n; i++) await get(url, headers);
  return (performance.now() - start) / n;
}

const headers = { 'x-api-key': KEY };
await perRequestMs(`${upstreamUrl}/users/1`, {}, 500); // warm-up (and undici's first load)
await perRequestMs(`${mockUrl}/mock/users/1`, headers, 500);
const added = [];
for (let round = 0; round < ROUNDS; round++) {
  const direct = await perRequestMs(`${upstreamUrl}/users/1`, {}, PER_ROUND);
  const proxied = await perRequestMs(`${mockUrl}/mock/users/1`, headers, PER_ROUND);
  added.push(proxied - direct);
  console.log(
    `round ${round + 1}: upstream ${(direct * 1000).toFixed(0)} µs, through the mock ${(proxied * 1000).toFixed(0)} µs, added ${((proxied - direct) * 1000).toFixed(0)} µs`,
  );
}
added.sort((a, b) => a - b);
const median = added[Math.floor(added.length / 2)];
console.log(`median added per proxied request: ${(median * 1000).toFixed(0)} µs`);
console.log(`target added ≤ 1 ms (1000 µs) on loopback: ${median <= 1 ? 'PASS' : 'FAIL'}`);
child.kill('SIGTERM');
upstream.close();
agent.destroy();
rmSync(dir, { recursive: true, force: true });
