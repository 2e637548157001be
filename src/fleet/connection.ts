import { createHash } from 'node:crypto';
import { redactStoreUrl, checkStoreUrl } from '../config/store-url.js';
import { firstConnection, newClient, StoreSetupError, type Client } from '../state/redis-client.js';

/** The client calls a fleet uses beyond the limit store's: publish and subscribe. */
type PubSubClient = Client & {
  subscribe(channel: string, listener: (message: string) => void): Promise<void>;
  unsubscribe(channel?: string): Promise<void>;
};

/** A Lua script, run by its hash (and by its source when Redis does not have it yet). */
export interface Script {
  source: string;
  sha: string;
}

export const script = (source: string): Script => ({ source, sha: createHash('sha1').update(source).digest('hex') });

/** Longest wait for a reply before a command counts as failed (and the store as away). */
export const COMMAND_TIMEOUT_MS = 3000;
/** Longest wait for the first connection at start; the server then starts with the store away. */
const CONNECT_WAIT_MS = 2000;

/** A command that got no answer in time, or that Redis could not take: the caller keeps working without the store. */
export class FleetStoreError extends Error {
  override name = 'FleetStoreError';
}

/**
 * The fleet's connections to its Redis: one for commands, one subscribed to the fleet's channel,
 * and one for blocking reads of the journal. While Redis is away, commands
 * fail at once (no offline queue: nothing piles up); a slow Redis fails them after
 * {@link COMMAND_TIMEOUT_MS}. `onUp` is called each time the command connection is ready again and
 * the subscriber holds every channel: what the others tell from then on is heard, so a part that
 * reads the fleet's state again on `onUp` misses nothing.
 */
export interface FleetConnection {
  /** True while the command connection is ready and every subscription is held. */
  readonly up: boolean;
  readonly url: string;
  send(args: string[]): Promise<unknown>;
  run(script: Script, keys: string[], args: string[]): Promise<unknown>;
  /**
   * Sends `args` as they are (the array itself, not a copy): the client encodes a command when it
   * writes it, at the end of the loop turn, so arguments pushed onto `args` until then go with it.
   * What the command received must be checked from its reply (see journal-sink.ts). No deadline:
   * it settles when Redis answers or the connection breaks (the caller bounds how many are out).
   */
  sendOpen(args: string[]): Promise<unknown>;
  /**
   * Subscribes to `channel` on the subscriber connection, kept across reconnections; while Redis is
   * away it resolves at once and the subscription is made when it is back, before `onUp` is called.
   */
  subscribe(channel: string, listener: (message: string) => void): Promise<void>;
  /** The connection for blocking commands (XREAD BLOCK): the journal's tail alone uses it. */
  blocking(): Client;
  /** Calls `listener` each time the fleet is reachable again (see `up`); the function returned stops it. */
  onUp(listener: () => void): () => void;
  onDown(listener: (reason: string) => void): void;
  close(): Promise<void>;
}

// (named: CLIENT LIST shows which host and which connection it is)
const makeClient = (url: string, name: string): PubSubClient => newClient(url, name) as PubSubClient;

/**
 * Connects to the fleet's Redis; resolves once connected, at the first refusal, or after 2 s without
 * an answer (then away, retrying by itself).
 */
/** `name`: what `CLIENT LIST` shows for its connections (`<name>:cmd`, `:sub`, `:tail`). */
export async function openFleetConnection(url: string, name = `mockapi-${process.pid}`): Promise<FleetConnection> {
  const problem = checkStoreUrl(url);
  if (problem !== undefined) throw new StoreSetupError(`fleet.store ${problem}`);
  let client: PubSubClient;
  let subscriber: PubSubClient;
  let blockingClient: PubSubClient;
  try {
    client = makeClient(url, `${name}:cmd`);
    subscriber = makeClient(url, `${name}:sub`);
    blockingClient = makeClient(url, `${name}:tail`);
  } catch (err) {
    if (err instanceof StoreSetupError) throw new StoreSetupError(err.message.replace('limits.store', 'fleet.store'));
    throw new StoreSetupError(`fleet.store ${redactStoreUrl(url)}: ${(err as Error).message}`);
  }
  let closed = false;
  let isUp = false;
  // Up: the command connection is ready and the subscriber holds every channel asked for. A host that
  // caught up with the fleet's state while its subscription was still away missed what the others
  // told meanwhile (a stub change, say) and never heard it again.
  let commandsReady = false;
  let subscriberReady = false;
  const wanted = new Map<string, (message: string) => void>();
  const held = new Set<string>();
  const ups: (() => void)[] = [];
  const downs: ((reason: string) => void)[] = [];
  const down = (reason: string): void => {
    if (closed || !isUp) return;
    isUp = false;
    for (const listener of downs) listener(reason);
  };
  const maybeUp = (): void => {
    if (closed || isUp || !commandsReady || !subscriberReady || held.size < wanted.size) return;
    isUp = true;
    for (const listener of ups) listener();
  };
  // A SUBSCRIBE that Redis refuses on a connection that stays up (a user without channel rights:
  // NOPERM) is said, and tried again each second; a subscriber that reconnects tries on its 'ready'.
  const hold = (channel: string): Promise<void> =>
    subscriber.subscribe(channel, wanted.get(channel)!).then(
      () => {
        held.add(channel);
        maybeUp();
      },
      (err: unknown) => {
        down(
          `the subscription to the fleet's channel was refused: ${err instanceof Error ? err.message : String(err)}`,
        );
        const again = (): void => void (!closed && subscriber.isReady && !held.has(channel) && hold(channel));
        if (subscriber.isReady) setTimeout(again, 1000).unref();
      },
    );
  /**
   * Follows one connection's state: `ready` is told whether it is ready at each change. An error on
   * a connection still ready is not its loss (node-redis says it is not ready before it reports a
   * broken socket; a listener that threw, say, is reported on a live one) and changes nothing.
   */
  const follow = (c: PubSubClient, ready: (is: boolean) => void, back: () => void): void => {
    c.on('error', (err) => {
      if (c.isReady) return;
      ready(false);
      down((err as Error).message || String(err));
    });
    c.on('end', () => {
      ready(false);
      down('connection closed');
    });
    c.on('ready', () => {
      ready(true);
      back();
    });
  };
  follow(client, (is) => (commandsReady = is), maybeUp);
  // The subscriber reconnects by itself and is ready once it subscribed again to what it held
  // (node-redis resubscribes before it says ready); a channel it never got is asked for then.
  follow(
    subscriber,
    (is) => (subscriberReady = is),
    () => {
      for (const channel of wanted.keys()) if (!held.has(channel)) void hold(channel);
      maybeUp();
    },
  );
  blockingClient.on('error', () => {});
  const connect = (c: PubSubClient): Promise<boolean> =>
    c.connect().then(
      () => true,
      () => false,
    );
  // The wait ends at the command connection's first refusal (a host whose Redis is down starts at
  // once, and joins when it is back: the subscription is made before anything is caught up).
  await firstConnection(
    client,
    Promise.all([connect(client), connect(subscriber), connect(blockingClient)]),
    CONNECT_WAIT_MS,
  );
  commandsReady = client.isReady;
  subscriberReady = subscriber.isReady;
  isUp = commandsReady && subscriberReady;

  // One sweep fails every command past its deadline (no timer per command).
  const waiting = new Set<{ deadline: number; fail: (err: Error) => void }>();
  const sweep = setInterval(() => {
    const now = Date.now();
    for (const entry of waiting) {
      if (entry.deadline > now) continue;
      waiting.delete(entry);
      entry.fail(new FleetStoreError(`the fleet's Redis gave no answer in time`));
    }
  }, 250);
  sweep.unref();

  function on(c: Client, args: string[], timeoutMs = COMMAND_TIMEOUT_MS): Promise<unknown> {
    return new Promise((done, fail) => {
      const entry = { deadline: Date.now() + timeoutMs, fail };
      waiting.add(entry);
      c.sendCommand(args).then(
        (reply) => {
          waiting.delete(entry);
          done(reply);
        },
        (err: unknown) => {
          waiting.delete(entry);
          fail(new FleetStoreError(err instanceof Error ? err.message : String(err)));
        },
      );
    });
  }
  const send = (args: string[]): Promise<unknown> => on(client, args);

  return {
    get up() {
      return isUp && !closed;
    },
    url,
    send,
    async run(s, keys, args) {
      try {
        return await send(['EVALSHA', s.sha, String(keys.length), ...keys, ...args]);
      } catch (err) {
        if (!(err instanceof Error) || !err.message.includes('NOSCRIPT')) throw err;
        return send(['EVAL', s.source, String(keys.length), ...keys, ...args]);
      }
    },
    sendOpen: (args) => client.sendCommand(args),
    async subscribe(channel, listener) {
      wanted.set(channel, listener);
      if (!subscriber.isReady) return void down('the subscription is not made yet');
      await hold(channel);
    },
    blocking: () => blockingClient,
    onUp(listener) {
      ups.push(listener);
      return () => {
        const at = ups.indexOf(listener);
        if (at !== -1) ups.splice(at, 1);
      };
    },
    onDown: (listener) => void downs.push(listener),
    async close() {
      closed = true;
      clearInterval(sweep);
      for (const entry of waiting) entry.fail(new FleetStoreError('the fleet connection is closed'));
      waiting.clear();
      blockingClient.destroy(); // a blocking read in flight would hold a graceful close up to its block time
      await Promise.all(
        [client, subscriber].map(async (c) => {
          if (c.isReady) await c.close().catch(() => c.destroy());
          else c.destroy();
        }),
      );
    },
  };
}

/** Sends a command on a connection of its own (a blocking read) with a deadline of `timeoutMs`. */
export function sendBlocking(c: Client, args: string[], timeoutMs: number): Promise<unknown> {
  return new Promise((done, fail) => {
    const timer = setTimeout(
      () => fail(new FleetStoreError(`the fleet's Redis gave no answer within ${timeoutMs} ms`)),
      timeoutMs,
    );
    c.sendCommand(args).then(
      (reply) => {
        clearTimeout(timer);
        done(reply);
      },
      (err: unknown) => {
        clearTimeout(timer);
        fail(new FleetStoreError(err instanceof Error ? err.message : String(err)));
      },
    );
  });
}

/**
 * The field-value pairs of a hash reply (HGETALL), however the client gives it: a flat list
 * (RESP2), a plain object or a Map (RESP3's map type).
 */
export function pairsOf(reply: unknown): [string, string][] {
  if (Array.isArray(reply)) {
    const out: [string, string][] = [];
    for (let i = 0; i + 1 < reply.length; i += 2) out.push([String(reply[i]), String(reply[i + 1])]);
    return out;
  }
  if (reply instanceof Map) return [...reply].map(([k, v]) => [String(k), String(v)]);
  if (typeof reply === 'object' && reply !== null) return Object.entries(reply).map(([k, v]) => [k, String(v)]);
  return [];
}

/** The entries of one stream in an XREAD reply (`[[key, entries]]`, or `{ key: entries }`); none for a null reply. */
export function streamEntriesOf(reply: unknown): unknown[] {
  if (Array.isArray(reply)) return Array.isArray(reply[0]) ? (((reply[0] as unknown[])[1] as unknown[]) ?? []) : [];
  if (reply instanceof Map) return ([...reply.values()][0] as unknown[] | undefined) ?? [];
  if (typeof reply === 'object' && reply !== null) return (Object.values(reply)[0] as unknown[] | undefined) ?? [];
  return [];
}
