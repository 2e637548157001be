// keepTickObjectShape (src/tick-shape.ts) keeps one of Node's nextTick objects alive so that a
// memory-reducing collection cannot clear the shapes V8 remembers for nextTick's object literal.
// Its effect is on speed, which `npm test` does not time; these tests check what the speed depends
// on, in a child `node --allow-natives-syntax` (for %HaveSameMap): the kept object survives such a
// collection while an unkept tick object does not, and tick objects made after it still have the
// kept object's shape. A heap snapshot forces the collection: V8 takes it after a full collection
// that reduces memory, as the memory reducer's does.
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { ROOT, removeDir, tempDir } from '../helpers/cli.js';

let dir: string;
beforeAll(async () => {
  dir = await tempDir('mockapi-tick-shape-');
});
afterAll(async () => {
  await removeDir(dir);
});

const dist = (file: string): string => pathToFileURL(join(ROOT, 'dist', file)).href;

/** Runs an ES module script in `node --allow-natives-syntax` and returns the JSON it prints. */
function runScript(script: string): Promise<unknown> {
  return new Promise((done, fail) => {
    const env: NodeJS.ProcessEnv = { ...process.env };
    delete env.NODE_OPTIONS;
    const child = spawn(process.execPath, ['--allow-natives-syntax', '--input-type=module', '-e', script], {
      env,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => (stdout += d));
    child.stderr.on('data', (d) => (stderr += d));
    child.on('error', fail);
    child.on('close', (code) => {
      if (code === 0) done(JSON.parse(stdout));
      else fail(new Error(`exit ${code}: ${stderr}`));
    });
  });
}

// Shared by the scripts: capture the tick objects Node makes while `fn` runs.
const PRELUDE = `
import { createHook } from 'node:async_hooks';
import { writeHeapSnapshot } from 'node:v8';
function ticksDuring(fn) {
  const ticks = [];
  const hook = createHook({ init(id, type, trigger, resource) { if (type === 'TickObject') ticks.push(resource); } }).enable();
  try { return [fn(), ticks]; } finally { hook.disable(); }
}
const nextTurn = () => new Promise((done) => setTimeout(done, 0));
`;

describe('keepTickObjectShape', () => {
  test('keeps a nextTick object alive through a memory-reducing collection, with the shape new ones get', async () => {
    const script = `${PRELUDE}
      const { keepTickObjectShape } = await import(${JSON.stringify(dist('tick-shape.js'))});
      const kept = new WeakRef(keepTickObjectShape());
      const same = keepTickObjectShape() === kept.deref();
      const control = (() => new WeakRef(ticksDuring(() => process.nextTick(() => {}))[1][0]))();
      await nextTurn(); // WeakRef targets stay alive until the job that made them ends
      writeHeapSnapshot(${JSON.stringify(join(dir, 'a.heapsnapshot'))});
      const [, [fresh]] = ticksDuring(() => process.nextTick(() => {}));
      const alive = kept.deref();
      console.log(JSON.stringify({
        same,
        keptAlive: alive !== undefined,
        controlAlive: control.deref() !== undefined,
        sameShape: alive !== undefined && %HaveSameMap(alive, fresh),
        keys: alive === undefined ? [] : Reflect.ownKeys(alive).map(String),
      }));`;
    expect(await runScript(script)).toEqual({
      same: true,
      keptAlive: true,
      // The collection did clear what nothing kept: without the kept object, the shapes go too.
      controlAlive: false,
      sameShape: true,
      keys: ['callback', 'args', 'Symbol(async_id_symbol)', 'Symbol(trigger_async_id_symbol)'],
    });
  });

  test('startMockServer keeps one of the tick objects Node made while it started', async () => {
    const script = `${PRELUDE}
      const { startMockServer } = await import(${JSON.stringify(dist('index.js'))});
      const { keepTickObjectShape } = await import(${JSON.stringify(dist('tick-shape.js'))});
      const [starting, ticks] = ticksDuring(() => startMockServer({
        config: { apiKey: 'mk_tickShapeTestKey0000000000000000', endpoints: [{ method: 'GET', path: '/a', response: { body: 'a' } }] },
        port: 0,
      }));
      const server = await starting;
      const kept = keepTickObjectShape();
      await server.close();
      console.log(JSON.stringify({ madeDuringStart: ticks.includes(kept) }));`;
    expect(await runScript(script)).toEqual({ madeDuringStart: true });
  });
});
