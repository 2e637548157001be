#!/usr/bin/env node
// How long `mockapi import` takes on a synthetic 1,000-operation description (SPEC §11: seconds;
// the bar: under 10 s). The description is split over files like a real one: the paths in
// ten files, the schemas in one, joined by relative $refs; half the operations have an example,
// half get a body generated from a schema (with allOf, enums, formats and a circular reference).
//
//   npm run build && node bench/import.js [operations]
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { stringify } from 'yaml';

const OPERATIONS = Number(process.argv[2] ?? 1000);
const BIN = fileURLToPath(new URL('../bin/mockapi.js', import.meta.url));
const dir = mkdtempSync(join(tmpdir(), 'mockapi-bench-import-'));

const schemas = {
  Base: {
    type: 'object',
    required: ['id', 'createdAt'],
    properties: { id: { type: 'string', format: 'uuid' }, createdAt: { type: 'string', format: 'date-time' } },
  },
  Item: {
    allOf: [
      { $ref: '#/Base' },
      {
        type: 'object',
        required: ['name', 'status'],
        properties: {
          name: { type: 'string' },
          status: { type: 'string', enum: ['active', 'archived'] },
          owner: { type: 'string', format: 'email' },
          children: { type: 'array', items: { $ref: '#/Item' } },
        },
      },
    ],
  },
};
const FILES = 10;
const perFile = Array.from({ length: FILES }, () => ({}));
const paths = {};
const methods = ['get', 'put', 'post', 'delete'];
for (let i = 0; i < OPERATIONS / methods.length; i++) {
  const path = `/resource${i}/{id}`;
  const item = {};
  for (const [m, method] of methods.entries()) {
    const n = i * methods.length + m;
    const media =
      n % 2 === 0
        ? { schema: { $ref: '../schemas.yaml#/Item' } }
        : {
            schema: { $ref: '../schemas.yaml#/Item' },
            example: { id: `item-${n}`, name: `Item ${n}`, status: 'active' },
          };
    item[method] = {
      summary: `Operation ${n}`,
      operationId: `op${n}`,
      responses: {
        200: { description: 'ok', content: { 'application/json': media } },
        404: { description: 'missing' },
      },
    };
  }
  perFile[i % FILES][path] = item;
  paths[path] = { $ref: `./paths/part${i % FILES}.yaml#/${path.replace(/~/g, '~0').replace(/\//g, '~1')}` };
}
mkdirSync(join(dir, 'paths'));
perFile.forEach((items, f) => writeFileSync(join(dir, 'paths', `part${f}.yaml`), stringify(items)));
writeFileSync(join(dir, 'schemas.yaml'), stringify(schemas));
writeFileSync(
  join(dir, 'openapi.yaml'),
  stringify({
    openapi: '3.1.0',
    info: { title: 'bench', version: '1' },
    servers: [{ url: 'https://api.example/v1' }],
    paths,
  }),
);

function run(args) {
  const start = process.hrtime.bigint();
  const res = spawnSync(process.execPath, [BIN, ...args], { cwd: dir, encoding: 'utf8' });
  const ms = Number(process.hrtime.bigint() - start) / 1e6;
  if (res.status !== 0 && !args.includes('--check'))
    throw new Error(`mockapi ${args.join(' ')} failed:\n${res.stderr}`);
  return { ms, stderr: res.stderr.trim().split('\n')[0] };
}

try {
  const first = run(['import', 'openapi.yaml', '-c', 'mockapi.yaml']);
  const again = run(['import', 'openapi.yaml', '-c', 'mockapi.yaml']);
  const check = run(['import', 'openapi.yaml', '-c', 'mockapi.yaml', '--check']);
  console.log(
    `import of ${OPERATIONS} operations (new config):   ${(first.ms / 1000).toFixed(2)} s  — ${first.stderr}`,
  );
  console.log(`re-import, unchanged (nothing written): ${(again.ms / 1000).toFixed(2)} s`);
  console.log(`--check:                                ${(check.ms / 1000).toFixed(2)} s  — ${check.stderr}`);
} finally {
  rmSync(dir, { recursive: true, force: true });
}
