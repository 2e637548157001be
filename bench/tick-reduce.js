#!/usr/bin/env node
// What a memory-reducing garbage collection does to process.nextTick, with and without
// keepTickObjectShape() (src/tick-shape.ts; BENCHMARKS.md, item 23). Each case runs in a child
// process: ns per nextTick in a loop, three times; then a heap snapshot, which V8 takes after a
// full collection that reduces memory (as the memory reducer's does); then three times again.
// Not part of `npm run bench`'s verdicts. About 10 s.
//   npm run build && node bench/tick-reduce.js
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const TICKS = 2_000_000;

if (process.argv[2] === '--child') await child(process.argv[3] === 'keep', process.argv[4]);
else parent();

function parent() {
  const dir = mkdtempSync(join(tmpdir(), 'mockapi-tick-reduce-'));
  try {
    for (const keep of [false, true]) {
      const args = [fileURLToPath(import.meta.url), '--child', keep ? 'keep' : 'none', join(dir, 'x.heapsnapshot')];
      const res = spawnSync(process.execPath, args, { encoding: 'utf8' });
      if (res.status !== 0) throw new Error(res.stderr);
      const { before, after } = JSON.parse(res.stdout);
      const show = (values) => values.map((ns) => ns.toFixed(0)).join(' / ');
      process.stdout.write(
        `${keep ? 'keepTickObjectShape()' : 'nothing kept'}`.padEnd(24) +
          `before: ${show(before)} ns per nextTick;  after a memory-reducing GC: ${show(after)} ns\n`,
      );
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

async function child(keep, snapshotFile) {
  const { writeHeapSnapshot } = await import('node:v8');
  if (keep) {
    const { keepTickObjectShape } = await import(new URL('../dist/tick-shape.js', import.meta.url).href);
    keepTickObjectShape();
  }
  const loop = () =>
    new Promise((done) => {
      let n = 0;
      const started = process.hrtime.bigint();
      const step = (arg) => {
        if (++n === TICKS) done(Number(process.hrtime.bigint() - started) / TICKS);
        else process.nextTick(step, arg);
      };
      process.nextTick(step, 1);
    });
  const before = [await loop(), await loop(), await loop()];
  await new Promise((done) => setTimeout(done, 50)); // no tick object left alive
  writeHeapSnapshot(snapshotFile);
  const after = [await loop(), await loop(), await loop()];
  process.stdout.write(JSON.stringify({ before, after }));
}
