// The Redis connections of the stores (limits, resources, fleet): the optional @redis/client loaded
// on first use, every client made from one template, and the connection the sessions' stores share.
import { createRequire } from 'node:module';

/** The part of a node-redis client the stores use. */
export type Client = {
  isReady: boolean;
  on(event: string, listener: (...args: unknown[]) => void): unknown;
  off(event: string, listener: (...args: unknown[]) => void): unknown;
  connect(): Promise<unknown>;
  sendCommand(args: string[]): Promise<unknown>;
  close(): Promise<void>;
  destroy(): void;
};

/** Thrown by the stores when `@redis/client` is not installed or the URL is malformed. */
export class StoreSetupError extends Error {
  override name = 'StoreSetupError';
}

/** @redis/client, loaded when a store is first opened. */
export function loadClient(): { createClient(options: object): Client } {
  try {
    // Optional dependency, loaded only when a store is configured: `serve` without one loads nothing
    // of it. Required (it is CommonJS) rather than imported: the CLI bundle runs as a vm.Script,
    // where a dynamic import() has no loader; scripts/bundle.mjs keeps the package external.
    return createRequire(import.meta.url)('@redis/client') as { createClient(options: object): Client };
  } catch (err) {
    throw new StoreSetupError(
      `limits.store needs the optional dependency @redis/client, which is not installed (npm install @redis/client): ${(err as Error).message}`,
    );
  }
}

/** Options every connection to a store shares; `url` and `name` are each connection's own. */
const CLIENT_OPTIONS = {
  // While disconnected, fail at once instead of queueing: the request gets its answer now.
  disableOfflineQueue: true,
  // node-redis 5+ gives every command a 5 s timeout of its own (an AbortSignal.timeout, a timer
  // and a listener per command: a fifth of this process's CPU under load, mostly garbage); the
  // stores keep their deadlines with one sweep instead.
  commandOptions: { timeout: 0 },
};
const socketOptions = () => ({
  connectTimeout: 1000,
  reconnectStrategy: (retries: number) => Math.min(50 * (retries + 1), 1000),
});

/**
 * Waits for a client's first connection (`connecting`: its `connect()`, or a shared one's): true once
 * it is connected; false at the client's first error, or after `waitMs` without an answer (a host
 * that drops the packets). A store that refuses the connection, or whose name does not resolve, is
 * away now, and waiting on would only delay the start: the client goes on reconnecting by itself,
 * and the store is used once it is back. (A wait of `waitMs` for every store in turn made a server
 * with its Redis down start in about 5 s, and `usage` wait 3 s for each key.)
 */
export async function firstConnection(client: Client, connecting: Promise<unknown>, waitMs: number): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  let failed: (() => void) | undefined;
  const gaveUp = new Promise<boolean>((done) => {
    timer = setTimeout(done, waitMs, false);
    failed = () => done(false);
    client.on('error', failed);
  });
  try {
    return await Promise.race([
      connecting.then(
        () => true,
        () => false,
      ),
      gaveUp,
    ]);
  } finally {
    clearTimeout(timer);
    client.off('error', failed!);
  }
}

/** The client every other is a duplicate of: made once, never connected. */
let template: (Client & { duplicate(overrides: object): Client }) | undefined;

/**
 * A new, unconnected client of the store at `url`; `name` is what `CLIENT LIST` shows for it.
 * node-redis builds a client class (its command methods) for each options object it has not just
 * seen, some 60 ms of CPU each: a fleet host's four connections took a quarter of a second of its
 * start. Each client here is a duplicate of one made once, so the class is built once a process.
 * (A fresh `socket` each: node-redis merges the URL's host or path into the one it is given.)
 */
export function newClient(url: string, name?: string): Client {
  template ??= loadClient().createClient({ ...CLIENT_OPTIONS, socket: socketOptions() }) as unknown as NonNullable<
    typeof template
  >;
  return template.duplicate({ url, socket: socketOptions(), ...(name === undefined ? {} : { name }) });
}

/** The connections the sessions' stores share, by URL: made by the first lease, closed by the last release. */
const leases = new Map<string, { client: Client; connected: Promise<unknown>; users: number }>();

/**
 * A lease of the one connection to `url` that the named sessions' stores of this process share (a
 * fleet's sessions each count their limits in the store: one connection each would be thousands).
 */
export function leaseClient(
  url: string,
  make: () => Client,
): { client: Client; connected: Promise<unknown>; release(): Promise<void> } {
  let shared = leases.get(url);
  if (shared === undefined) {
    const client = make();
    (client as unknown as { setMaxListeners(n: number): void }).setMaxListeners(0); // one set per session
    client.on('error', () => {}); // each store reports through its own listener
    shared = { client, connected: client.connect(), users: 0 };
    shared.connected.catch(() => {});
    leases.set(url, shared);
  }
  shared.users++;
  const held = shared;
  let released = false;
  return {
    client: held.client,
    connected: held.connected,
    async release() {
      if (released) return;
      released = true;
      if (--held.users > 0 || leases.get(url) !== held) return;
      leases.delete(url);
      if (held.client.isReady) await held.client.close().catch(() => held.client.destroy());
      else held.client.destroy();
    },
  };
}
