// What each test file costs, for work on the suite's length: run before each file when
// MOCKAPI_TEST_CPU names a file (vitest.config.ts), it appends one line per test file to it —
// the file, the CPU seconds of the worker process during it, those of the processes it spawned and
// waited for (reaped children: a CLI, npm, a browser), its wall seconds, and the processes it spawned
// by command (`cli:serve`, `npm:install`, …). Linux only (/proc/self/stat).
//
//   MOCKAPI_TEST_CPU=/tmp/cpu.txt npx vitest run
//   sort -k5 -g -r /tmp/cpu.txt | head     # the files that cost the most CPU, own and children's
import { afterAll, beforeAll, expect } from 'vitest';
import { appendFileSync, readFileSync } from 'node:fs';
import { createRequire, syncBuiltinESMExports } from 'node:module';
import { basename } from 'node:path';

const OUT = process.env.MOCKAPI_TEST_CPU;
const TICKS_PER_SECOND = 100; // USER_HZ on Linux

interface Counted {
  spawned: string[];
}
const state = globalThis as typeof globalThis & { __mockapiCpuReport?: Counted };

/** `child_process.spawn` wrapped once per worker process, so every file's spawns are counted (ES imports see the change). */
function countSpawns(): Counted {
  if (state.__mockapiCpuReport !== undefined) return state.__mockapiCpuReport;
  const counted: Counted = { spawned: [] };
  const childProcess = createRequire(import.meta.url)('node:child_process') as typeof import('node:child_process');
  const spawn = childProcess.spawn;
  childProcess.spawn = function (this: unknown, command: string, ...rest: unknown[]) {
    const args = Array.isArray(rest[0]) ? (rest[0] as string[]) : [];
    const cli = command === process.execPath && String(args[0]).endsWith('bin/mockapi.js');
    counted.spawned.push(cli ? `cli:${args[1] ?? ''}` : `${basename(command)}:${args[0] ?? ''}`);
    return (spawn as (...a: unknown[]) => unknown).call(this, command, ...rest);
  } as typeof spawn;
  syncBuiltinESMExports();
  return (state.__mockapiCpuReport = counted);
}

/** Own and reaped children's CPU ticks of this process. */
function ticks(): { own: number; children: number } {
  const stat = readFileSync('/proc/self/stat', 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return { own: Number(fields[11]) + Number(fields[12]), children: Number(fields[13]) + Number(fields[14]) };
}

if (OUT !== undefined && OUT !== '') {
  const counted = countSpawns();
  let start = ticks();
  let startedAt = Date.now();
  beforeAll(() => {
    counted.spawned = [];
    start = ticks();
    startedAt = Date.now();
  });
  // Registered before the shared-process reset's hook, so it runs after it (and after the serve children it stops).
  afterAll(() => {
    const end = ticks();
    const own = (end.own - start.own) / TICKS_PER_SECOND;
    const children = (end.children - start.children) / TICKS_PER_SECOND;
    const byCommand: Record<string, number> = {};
    for (const what of counted.spawned) byCommand[what] = (byCommand[what] ?? 0) + 1;
    const file = expect.getState().testPath ?? '?';
    appendFileSync(
      OUT,
      `${file} ${own.toFixed(2)} ${children.toFixed(2)} ${((Date.now() - startedAt) / 1000).toFixed(1)} ${(own + children).toFixed(2)} ${JSON.stringify(byCommand)}\n`,
    );
  });
}
