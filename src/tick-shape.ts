import { createHook } from 'node:async_hooks';

let kept: object | undefined;

/**
 * Keeps one of Node's own `process.nextTick` objects alive for the life of the process, so that a
 * memory-reducing garbage collection cannot make every later `nextTick` call slow.
 *
 * Node 20 builds each tick object with an object literal whose first keys are computed (two
 * symbols). V8 11.3 remembers, for each computed key of a literal, the shape the object had before
 * it; it holds that shape weakly. A server that sits idle long enough gets a memory-reducing
 * collection from V8's memory reducer (its watchdog fires about 100 s after the last full
 * collection), and with no tick object alive at that moment, those shapes die. The next tick object
 * then meets a cleared entry, V8 marks the site megamorphic for good, and each of its two symbol
 * keys becomes a call into the runtime: measured, `nextTick` went from ~48 to ~218 ns, and a mock
 * server from ~75,000 to ~57,000 requests a second, from then on (BENCHMARKS.md, item 23). A live
 * tick object keeps the whole chain of shapes alive, so the entries are never cleared.
 *
 * The object is taken from Node itself, through an init hook that is enabled around one
 * `nextTick` call and disabled at once, rather than rebuilt here: it has the right shape on any
 * Node version. It is a few dozen bytes and its callback does nothing. Idempotent.
 */
export function keepTickObjectShape(): object | undefined {
  if (kept !== undefined) return kept;
  const hook = createHook({
    init(_asyncId, type, _triggerAsyncId, resource) {
      if (type === 'TickObject') kept = resource;
    },
  });
  hook.enable();
  try {
    process.nextTick(doNothing);
  } finally {
    hook.disable();
  }
  return kept;
}

function doNothing(): void {}
