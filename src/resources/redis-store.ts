import { createHash } from 'node:crypto';
import { checkStoreUrl, redactStoreUrl } from '../config/store-url.js';
import { firstConnection, newClient, StoreSetupError } from '../state/redis-client.js';
import { Connection } from './redis-connection.js';
import * as scripts from './redis-scripts.js';
import {
  GONE_LIMIT,
  HISTORY_LIMIT,
  type CollectionStore,
  type DueMove,
  type HistoryEntry,
  type IdempotencyRecord,
  type NewObject,
  type Page,
  type PageQuery,
  type ResourceStore,
  type SavedAnswer,
  type StoredObject,
} from './store.js';

/**
 * The resource store in Redis, shared by the workers of `serve --workers` and the hosts of a
 * fleet: every write is one Lua script (redis-scripts.ts), so two processes never interleave on
 * one object; pages walk the collection's creation order (a sorted set) in batches.
 */

/** Objects read per round trip while a page or a count walks the collection. */
const BATCH = 200;
/** Longest wait for the first connection. */
const CONNECT_WAIT_MS = 3000;

/** `version:seq:since:created:parent` (the parent last: it may hold `:`). */
function readMeta(id: string, text: string, meta: string): StoredObject {
  const m = /^(\d+):(\d+):(-?\d+):(-?\d+):([\s\S]*)$/.exec(meta);
  if (m === null) throw new Error(`a resource object's record in the store is not whole: ${id}`);
  return {
    id,
    text,
    version: Number(m[1]),
    seq: Number(m[2]),
    since: Number(m[3]),
    created: Number(m[4]),
    parent: m[5] as string,
  };
}

class RedisCollection implements CollectionStore {
  private readonly objects: string;
  private readonly metas: string;
  private readonly order: string;
  private readonly seq: string;
  private readonly gone: string;

  constructor(
    private readonly redis: Connection,
    private readonly base: string,
    private readonly name: string,
    private readonly names: string,
  ) {
    this.objects = `${base}:o`;
    this.metas = `${base}:m`;
    this.order = `${base}:ord`;
    this.seq = `${base}:seq`;
    this.gone = `${base}:gone`;
  }

  private historyKey(id: string): string {
    return `${this.base}:h:${id}`;
  }

  async history(id: string): Promise<readonly HistoryEntry[]> {
    const items = (await this.redis.send(['LRANGE', this.historyKey(id), '0', '-1'])) as string[];
    return items.map((item) => JSON.parse(item) as HistoryEntry);
  }

  async tag(id: string, version: number, request: number): Promise<void> {
    await this.redis.run(scripts.TAG, [this.metas, this.historyKey(id)], [id, String(version), String(request)]);
  }

  async get(id: string): Promise<StoredObject | undefined> {
    const [text, meta] = (await this.redis.run(scripts.GET, [this.objects, this.metas], [id])) as [
      string | null,
      string | null,
    ];
    return text === null || meta === null ? undefined : readMeta(id, text, meta);
  }

  async create(object: NewObject, history: HistoryEntry): Promise<StoredObject | undefined> {
    const seq = await this.redis.run(
      scripts.CREATE,
      [this.objects, this.metas, this.order, this.seq, this.historyKey(object.id), this.names, this.gone],
      [
        object.id,
        object.text,
        String(object.since),
        String(object.created),
        object.parent,
        JSON.stringify(history),
        String(HISTORY_LIMIT),
        this.name,
      ],
    );
    if (seq === null || seq === false) return undefined;
    return { ...object, version: 1, seq: Number(seq) };
  }

  async replace(
    id: string,
    version: number,
    text: string,
    since: number,
    history: HistoryEntry,
  ): Promise<StoredObject | 'conflict' | undefined> {
    const reply = (await this.redis.run(
      scripts.REPLACE,
      [this.objects, this.metas, this.historyKey(id)],
      [id, String(version), text, String(since), JSON.stringify(history), String(HISTORY_LIMIT)],
    )) as string;
    if (reply === 'missing') return undefined;
    if (reply === 'conflict') return 'conflict';
    return readMeta(id, text, reply);
  }

  async delete(id: string): Promise<StoredObject | undefined> {
    const [text, meta] = (await this.redis.run(
      scripts.DELETE,
      [this.objects, this.metas, this.order, this.historyKey(id), this.gone],
      [id, String(GONE_LIMIT)],
    )) as [string | null, string | null];
    return text === null || meta === null ? undefined : readMeta(id, text, meta);
  }

  /** The objects of ids, in that order (gone ones left out). */
  private async load(ids: readonly string[]): Promise<StoredObject[]> {
    if (ids.length === 0) return [];
    const [texts, metas] = (await Promise.all([
      this.redis.send(['HMGET', this.objects, ...ids]),
      this.redis.send(['HMGET', this.metas, ...ids]),
    ])) as [Array<string | null>, Array<string | null>];
    const out: StoredObject[] = [];
    ids.forEach((id, i) => {
      const text = texts[i];
      const meta = metas[i];
      if (text !== null && text !== undefined && meta !== null && meta !== undefined)
        out.push(readMeta(id, text, meta));
    });
    return out;
  }

  /** Ids by seq, from `from` (exclusive) in `order`, up to `maxSeq`, `count` of them. */
  private async ids(
    order: 'asc' | 'desc',
    from: number | undefined,
    maxSeq: number | undefined,
    offset: number,
    count: number,
  ): Promise<string[]> {
    const high = from !== undefined && order === 'desc' ? `(${from}` : maxSeq === undefined ? '+inf' : String(maxSeq);
    const low = from !== undefined && order === 'asc' ? `(${from}` : '-inf';
    const args =
      order === 'desc'
        ? ['ZREVRANGEBYSCORE', this.order, high, low]
        : ['ZRANGEBYSCORE', this.order, low, maxSeq === undefined ? '+inf' : String(maxSeq)];
    return (await this.redis.send([...args, 'LIMIT', String(offset), String(count)])) as string[];
  }

  async page(query: PageQuery): Promise<Page | 'unknown-cursor'> {
    let from: number | undefined;
    if (query.after !== undefined) {
      // (a deleted object's seq, from C:gone, places the cursor where it stood: a list deleted page by page)
      const score = ((await this.redis.send(['ZSCORE', this.order, query.after])) ??
        (await this.redis.send(['ZSCORE', this.gone, query.after]))) as string | null;
      if (score === null) return 'unknown-cursor';
      from = Number(score);
    }
    const plain = query.parent === undefined && query.test === undefined;
    const items: StoredObject[] = [];
    let skip = query.skip ?? 0;
    let offset = plain ? skip : 0;
    if (plain) skip = 0;
    for (;;) {
      const want = plain ? query.limit + 1 - items.length : BATCH;
      const ids = await this.ids(query.order, from, query.maxSeq, offset, want);
      offset += ids.length;
      for (const object of await this.load(ids)) {
        if (query.parent !== undefined && object.parent !== query.parent) continue;
        if (query.test !== undefined && !query.test(object)) continue;
        if (skip > 0) {
          skip--;
          continue;
        }
        if (items.length === query.limit) return { items, hasMore: true };
        items.push(object);
      }
      if (ids.length < want) return { items, hasMore: false };
    }
  }

  async count(query: Omit<PageQuery, 'after' | 'skip' | 'limit' | 'order'>): Promise<number> {
    if (query.parent === undefined && query.test === undefined)
      return Number(
        await this.redis.send([
          'ZCOUNT',
          this.order,
          '-inf',
          query.maxSeq === undefined ? '+inf' : String(query.maxSeq),
        ]),
      );
    let n = 0;
    for (let offset = 0; ; offset += BATCH) {
      const ids = await this.ids('asc', undefined, query.maxSeq, offset, BATCH);
      for (const object of await this.load(ids))
        if (
          (query.parent === undefined || object.parent === query.parent) &&
          (query.test === undefined || query.test(object))
        )
          n++;
      if (ids.length < BATCH) return n;
    }
  }

  async lastSeq(): Promise<number> {
    return Number((await this.redis.send(['GET', this.seq])) ?? 0);
  }

  async ticket(): Promise<number> {
    return Number(await this.redis.run(scripts.TICKET, [`${this.base}:draw`, this.seq], []));
  }

  async all(): Promise<readonly StoredObject[]> {
    const out: StoredObject[] = [];
    for (let offset = 0; ; offset += BATCH) {
      const ids = await this.ids('asc', undefined, undefined, offset, BATCH);
      out.push(...(await this.load(ids)));
      if (ids.length < BATCH) return out;
    }
  }
}

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
