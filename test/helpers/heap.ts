// The resident memory a served process holds, read after a full garbage collection asked for through
// its inspector: what it keeps, not what it has yet to collect (a large answer's text and bytes are
// garbage the moment it is written, and when V8 gets to them depends on the machine's memory and load,
// so a reading without a collection swings by as much as a test would look for).
import { readFileSync } from 'node:fs';
import { WebSocket } from 'undici';
import type { ServeProcess } from './cli.js';

/**
 * The environment that starts a served process's inspector on a port of its own (pass to
 * startServe). With `--workers`, node's cluster gives each worker the port after the primary's
 * (+1, +2…): one already taken leaves that worker without an inspector, and its memory is then read
 * without a collection, as before this helper.
 */
export const INSPECTED = {
  NODE_OPTIONS: [process.env.NODE_OPTIONS, '--inspect=127.0.0.1:0'].filter(Boolean).join(' '),
};

const rssMb = (pid: number): number =>
  Number(/VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1]) / 1024;

/** Two full collections (the second waits for the first's freeing of buffers) in the process whose inspector is at `url`. */
async function collectIn(url: string): Promise<void> {
  const ws = new WebSocket(url);
  // Settled by the connection's end too: a process that exits mid-call fails the call, never hangs it.
  const ended = new Promise<never>((_, fail) => {
    const end = () => fail(new Error(`the inspector at ${url} closed before it answered`));
    ws.addEventListener('close', end, { once: true });
    ws.addEventListener('error', end, { once: true });
  });
  ended.catch(() => {});
  await Promise.race([new Promise((open) => ws.addEventListener('open', open, { once: true })), ended]);
  let id = 0;
  const call = (method: string) =>
    Promise.race([
      new Promise<void>((done, fail) => {
        const mine = ++id;
        const answered = (e: Event) => {
          const reply = JSON.parse(String((e as MessageEvent).data)) as { id?: number; error?: { message?: string } };
          if (reply.id !== mine) return;
          ws.removeEventListener('message', answered);
          if (reply.error !== undefined) fail(new Error(`${method}: ${reply.error.message ?? 'failed'}`));
          else done();
        };
        ws.addEventListener('message', answered);
        ws.send(JSON.stringify({ id: mine, method }));
      }),
      ended,
    ]);
  try {
    await call('HeapProfiler.collectGarbage');
    await call('HeapProfiler.collectGarbage');
  } finally {
    // Closed before the test goes on: a process that exits with a session attached waits for it to go.
    const closed = new Promise((done) => ws.addEventListener('close', done, { once: true }));
    ws.close();
    await Promise.race([closed, new Promise((done) => setTimeout(done, 1000).unref())]);
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
