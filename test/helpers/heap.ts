// The resident memory a served process holds, read after a full garbage collection asked for through
// its inspector: what it keeps, not what it has yet to collect (a large answer's text and bytes are
// garbage the moment it is written, and when V8 gets to them depends on the machine's memory and load,
// so a reading without a collection swings by as much as a test would look for).
import { readFileSync } from 'node:fs';
import { WebSocket } from 'undici';
import type { ServeProcess } from './cli.js';

/** The environment that starts a served process's inspector on a port of its own (pass to startServe). */
export const INSPECTED = { NODE_OPTIONS: '--inspect=127.0.0.1:0' };

const rssMb = (pid: number): number =>
  Number(/VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1]) / 1024;

/** Two full collections (the second waits for the first's freeing of buffers) in the process whose inspector is at `url`. */
async function collectIn(url: string): Promise<void> {
  const ws = new WebSocket(url);
  await new Promise((open, fail) => {
    ws.addEventListener('open', open, { once: true });
    ws.addEventListener('error', fail, { once: true });
  });
  let id = 0;
  const call = (method: string) =>
    new Promise<void>((done) => {
      const mine = ++id;
      const answered = (e: Event) => {
        if ((JSON.parse(String((e as MessageEvent).data)) as { id?: number }).id !== mine) return;
        ws.removeEventListener('message', answered);
        done();
      };
      ws.addEventListener('message', answered);
      ws.send(JSON.stringify({ id: mine, method }));
    });
  try {
    await call('HeapProfiler.collectGarbage');
    await call('HeapProfiler.collectGarbage');
  } finally {
    ws.close();
  }
}

/** Full collections in every process of `s` started with its inspector: the served process and, with `--workers`, each worker. */
export async function collectGarbage(s: ServeProcess): Promise<void> {
  const urls = [...s.stderr().matchAll(/Debugger listening on (ws:\/\/\S+)/g)].map((m) => m[1] as string);
  if (urls.length === 0)
    throw new Error(`the process was not started with its inspector (env INSPECTED): ${s.stderr()}`);
  await Promise.all(urls.map(collectIn));
}

/** The served process's resident memory in MB after full collections. */
export async function rssAfterGcMb(s: ServeProcess): Promise<number> {
  await collectGarbage(s);
  return rssMb(s.child.pid!);
}
