import { createHash } from 'node:crypto';
import { checkStoreUrl, redactStoreUrl } from '../config/store-url.js';
import { firstConnection, newClient, StoreSetupError } from '../state/redis-client.js';
import { RedisCollection } from './redis-collection.js';
import { Connection } from './redis-connection.js';
import * as scripts from './redis-scripts.js';
import type { CollectionStore, DueMove, IdempotencyRecord, ResourceStore, SavedAnswer } from './store.js';

/**
 * The resource store in Redis, shared by the workers of `serve --workers` and the hosts of a
 * fleet: every write is one Lua script (redis-scripts.ts), so two processes never interleave on
 * one object; pages walk the collection's creation order (a sorted set) in batches (a collection:
 * redis-collection.ts). Here: the store of a project, its moves due and idempotency keys, and the
 * connection to it.
 */

/** Longest wait for the first connection. */
const CONNECT_WAIT_MS = 3000;

/** Objects, moves due and idempotency keys of a project in Redis. */
class RedisResourceStore implements ResourceStore {
  readonly shared = true;
  private readonly prefix: string;
  readonly reconnected = new Set<() => void>();

  constructor(
    private readonly redis: Connection,
    project: string,
  ) {
    this.prefix = `{mockapi:${project}}:res`;
  }

  private base(scope: string, name: string): string {
    return `${this.prefix}:${scope}:${name}`;
  }

  collection(scope: string, name: string): CollectionStore {
    return new RedisCollection(this.redis, this.base(scope, name), name, `${this.prefix}:${scope}:names`);
  }

  async markSeeded(scope: string, name: string): Promise<boolean> {
    return Number(await this.redis.send(['SADD', `${this.prefix}:${scope}:seeded`, name])) === 1;
  }

  async clear(scope: string, names?: readonly string[]): Promise<void> {
    const all = names ?? ((await this.redis.send(['SMEMBERS', `${this.prefix}:${scope}:names`])) as string[]);
    const seeded = `${this.prefix}:${scope}:seeded`;
    for (const name of new Set([
      ...all,
      ...(names === undefined ? ((await this.redis.send(['SMEMBERS', seeded])) as string[]) : []),
    ])) {
      const base = this.base(scope, name);
      await this.redis.run(
        scripts.CLEAR,
        [
          `${base}:o`,
          `${base}:m`,
          `${base}:ord`,
          `${base}:seq`,
          seeded,
          `${this.prefix}:${scope}:names`,
          `${base}:draw`,
          `${base}:gone`,
        ],
        [name, `${base}:h:`],
      );
    }
  }

  async schedule(move: Omit<DueMove, 'due'>, due: number | undefined): Promise<void> {
    const object = `${move.scope}|${move.collection}|${move.id}`;
    await this.redis.run(
      scripts.SCHEDULE,
      [`${this.prefix}:due`, `${this.prefix}:duev`],
      [object, `${object}#${move.version}`, due === undefined ? '' : String(due)],
    );
  }

  async takeDue(now: number, limit: number): Promise<readonly DueMove[]> {
    const reply = (await this.redis.run(
      scripts.TAKE_DUE,
      [`${this.prefix}:due`, `${this.prefix}:duev`],
      [String(now), String(limit)],
    )) as string[];
    const moves: DueMove[] = [];
    for (let i = 0; i < reply.length; i += 2) {
      const member = reply[i] as string;
      const m = /^([^|]*)\|([^|]*)\|([\s\S]*)#(\d+)$/.exec(member);
      if (m !== null)
        moves.push({
          scope: m[1] as string,
          collection: m[2] as string,
          id: m[3] as string,
          version: Number(m[4]),
          due: Number(reply[i + 1]),
        });
    }
    return moves;
  }

  async nextDue(): Promise<number | undefined> {
    const first = (await this.redis.send(['ZRANGE', `${this.prefix}:due`, '0', '0', 'WITHSCORES'])) as string[];
    return first.length < 2 ? undefined : Number(first[1]);
  }

  private keyOf(scope: string, key: string): string {
    return `${this.prefix}:${scope}:idem:${createHash('sha256').update(key).digest('base64url')}`;
  }

  async claimKey(
    scope: string,
    key: string,
    fingerprint: string,
    now: number,
    ttlMs: number,
  ): Promise<IdempotencyRecord | undefined> {
    const held = (await this.redis.run(
      scripts.CLAIM_KEY,
      [this.keyOf(scope, key)],
      [String(now), String(ttlMs), `${now + ttlMs}|pending|${fingerprint}`],
    )) as string | null;
    if (held === null || (held as unknown) === false) return undefined;
    const m = /^-?\d+\|(pending|done)\|([^|]*)\|?([\s\S]*)$/.exec(held);
    if (m === null) return undefined;
    if (m[1] === 'pending') return { state: 'pending', fingerprint: m[2] as string };
    return { state: 'done', fingerprint: m[2] as string, answer: JSON.parse(m[3] as string) as SavedAnswer };
  }

  async completeKey(
    scope: string,
    key: string,
    fingerprint: string,
    answer: SavedAnswer,
    now: number,
    ttlMs: number,
  ): Promise<void> {
    await this.redis.send([
      'SET',
      this.keyOf(scope, key),
      `${now + ttlMs}|done|${fingerprint}|${JSON.stringify(answer)}`,
      'PX',
      String(ttlMs),
    ]);
  }

  async releaseKey(scope: string, key: string): Promise<void> {
    await this.redis.run(scripts.RELEASE_KEY, [this.keyOf(scope, key)], []);
  }

  async clearKeys(scope: string): Promise<void> {
    let cursor = '0';
    do {
      const [next, keys] = (await this.redis.send([
        'SCAN',
        cursor,
        'MATCH',
        `${this.prefix}:${scope}:idem:*`,
        'COUNT',
        '500',
      ])) as [string, string[]];
      cursor = next;
      if (keys.length > 0) await this.redis.send(['DEL', ...keys]);
    } while (cursor !== '0');
  }

  onReconnect(listener: () => void): void {
    this.reconnected.add(listener);
  }

  close(): Promise<void> {
    return this.redis.close();
  }
}

/** Connects to the shared store at `url` (the config's `limits.store` or `--store`) for the resources of `project`. */
export async function openResourceStore(url: string, project: string): Promise<ResourceStore> {
  const problem = checkStoreUrl(url);
  if (problem !== undefined) throw new StoreSetupError(`the resource store ${problem}`);
  const client = newClient(url);
  let last = '';
  client.on('error', (err) => (last = (err as Error).message)); // a lost connection fails the commands of its time; the client reconnects by itself
  const connected = await firstConnection(
    client,
    client.connect().catch((err: Error) => {
      last = err.message;
      throw err;
    }),
    CONNECT_WAIT_MS,
  );
  if (!connected) {
    client.destroy();
    throw new StoreSetupError(
      `cannot connect to the resource store ${redactStoreUrl(url)}${last === '' ? '' : `: ${last}`}`,
    );
  }
  const store = new RedisResourceStore(new Connection(client), project);
  // Connected again after a loss: the store may have restarted empty (what was seeded is seeded again).
  let lost = false;
  client.on('end', () => (lost = true));
  client.on('error', () => (lost = true));
  client.on('ready', () => {
    if (!lost) return;
    lost = false;
    for (const listener of store.reconnected) listener();
  });
  return store;
}
