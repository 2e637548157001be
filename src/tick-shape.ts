import { createHook } from 'node:async_hooks';

let kept: object | undefined;

/**
 * Keeps one of Node's own `process.nextTick` objects alive for the life of the process, so that a
 * memory-reducing garbage collection cannot make every later `nextTick` call slow.
 *
 * Node 20 builds each tick object with an object literal whose first keys are computed (two
 * symbols). A server that sits idle long enough gets a memory-reducing collection from V8's memory
 * reducer (its watchdog fires about 100 s after the last full collection); with no tick object
 * alive at that moment, the shapes (maps) of that literal die, V8 throws away `nextTick`'s
 * optimized code ("weak objects"), and from then on every `nextTick` is slow: measured, ~48 →
 * ~218 ns a call, and a mock server ~75,000 → ~57,000 requests a second (BENCHMARKS.md, item 23).
 * Our reading of V8 11.3: the literal's feedback for each computed key holds the shape weakly, a
 * cleared entry turns the site megamorphic for good, and each symbol key becomes a runtime call.
 * A live tick object keeps the whole chain of shapes alive, so the entries are never cleared.
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
