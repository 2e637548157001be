/**
 * One collection of the resource store in Redis: its objects and their records (version, seq,
 * since, created, parent), its creation order (a sorted set), each object's history and the ids
 * of deleted objects; writes through the Lua scripts of redis-scripts.ts.
 */
import type { Connection } from './redis-connection.js';
import * as scripts from './redis-scripts.js';
import {
  GONE_LIMIT,
  HISTORY_LIMIT,
  type CollectionStore,
  type HistoryEntry,
  type NewObject,
  type Page,
  type PageQuery,
  type StoredObject,
} from './store.js';

/** Objects read per round trip while a page or a count walks the collection. */
const BATCH = 200;

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

export class RedisCollection implements CollectionStore {
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
