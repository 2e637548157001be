#!/usr/bin/env node
// Requests per second of a validated endpoint (openapi.spec, a small JSON body checked against its
// operation) against the same answer on an endpoint the description does not describe, in one
// server, in alternating rounds (the ratio is what matters: the target is at least 0.7).
//   npm run build && node bench/validate.js [seconds per round, default 5]
import { spawn } from 'node:child_process';
import { mkdtempSync, writeFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import autocannon from 'autocannon';

const root = fileURLToPath(new URL('..', import.meta.url));
const KEY = 'mk_benchValidate000000000000000001';
const seconds = Number(process.argv[2] ?? 5);
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
                metadata: { type: object, additionalProperties: { type: string } }
      responses: { '200': { description: ok } }
`,
);
writeFileSync(
  join(dir, 'mockapi.yaml'),
  `apiKey: ${KEY}\nopenapi:\n  spec: ./openapi.yaml\nendpoints:\n  - method: POST\n    path: /charges\n    response: { body: { id: ch_1 } }\n  - method: POST\n    path: /plain\n    response: { body: { id: ch_1 } }\n`,
);
const child = spawn(process.execPath, [join(root, 'bin/mockapi.js'), 'serve', '-c', join(dir, 'mockapi.yaml'), '--port', '0', '--log', 'off', '--no-state', '--no-watch'], { stdio: ['ignore', 'pipe', 'inherit'] });
const url = await new Promise((resolve, reject) => {
  let out = '';
  child.stdout.on('data', (d) => {
    out += d;
    const m = /listening on (\S+)/.exec(out);
    if (m) resolve(m[1]);
  });
  child.once('exit', (code) => reject(new Error(`serve exited ${code}`)));
});
const body = JSON.stringify({ amount: 500, currency: 'usd', metadata: { order_id: '42' } });
const run = async (path) => {
  const result = await autocannon({ url: `${url}/mock${path}`, method: 'POST', connections: 10, duration: seconds, headers: { 'x-api-key': KEY, 'content-type': 'application/json' }, body });
  if (result.non2xx > 0) throw new Error(`${path}: ${result.non2xx} answers were not 2xx`);
  return result.requests.average;
};
const rounds = { plain: [], validated: [] };
await run('/charges'); // compiles the operation's schema
for (let i = 0; i < 3; i++) {
  rounds.plain.push(await run('/plain'));
  rounds.validated.push(await run('/charges'));
}
child.kill();
rmSync(dir, { recursive: true, force: true });
const median = (list) => [...list].sort((a, b) => a - b)[Math.floor(list.length / 2)];
const plain = median(rounds.plain);
const validated = median(rounds.validated);
console.log(`unvalidated ${Math.round(plain)} req/s, validated ${Math.round(validated)} req/s (medians of 3 rounds): ratio ${(validated / plain).toFixed(2)} (target ≥ 0.70)`);
