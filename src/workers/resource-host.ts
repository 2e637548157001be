import type { Logger } from '../logger.js';
import { MemoryResourceStore } from '../resources/memory-store.js';
import { loadResources, resourcesFile, saveResources } from '../resources/persist.js';
import type { Page, PageQuery, StoredObject } from '../resources/store.js';
import { isStoreRequest, type StoreReply } from './resource-messages.js';

/** A worker as the host answers it (node:cluster's Worker, or a test's). */
export interface StorePeer {
  isConnected(): boolean;
  send(message: StoreReply, callback: (err: Error | null) => void): unknown;
}

/** The primary's end of the resources of `serve --workers` without a shared store: see {@link createResourceHost}. */
export interface ResourceHost {
  /** Answers a worker's store operation; false when the message is not one. */
  receive(worker: StorePeer, message: unknown): boolean;
  /** `resources.persist`: reads `.mockapi/resources.json` of `configDir` (before the workers start). */
  load(configDir: string, logger: Logger): Promise<void>;
  /** `resources.persist`: writes the file (once every worker stopped). */
  save(configDir: string, logger: Logger): Promise<void>;
}

/** What crosses the channel of an object: its fields, nothing the memory store keeps beside them. */
function plain(object: StoredObject): StoredObject {
  const { id, text, version, seq, parent, since, created } = object;
  return { id, text, version, seq, parent, since, created };
}

function plainPage(page: Page | 'unknown-cursor'): Page | 'unknown-cursor' {
  return page === 'unknown-cursor' ? page : { items: page.items.map(plain), hasMore: page.hasMore };
}

/** A page query as it crosses the channel: no filter; `fromSeq`, where to go on when `after` is gone (a walk). */
export type WireQuery = Omit<PageQuery, 'test'> & { readonly fromSeq?: number };

/**
 * The objects, moves due and idempotency keys every worker shares, in the primary's memory: each
 * operation a worker asks for runs here whole before the next (one thread), so a write naming a
 * version, a create whose id is taken, a key claimed, a move due taken are each decided once for
 * all the workers. The lifecycle's timers run in the workers; a move due is handed to one of them.
 */
export function createResourceHost(): ResourceHost {
  const store = new MemoryResourceStore();
  /** The last number a create's next try was given, per collection (as Redis's TICKET). */
  const draws = new Map<string, number>();

  const page = (scope: string, name: string, query: WireQuery): Page | 'unknown-cursor' => {
    const coll = store.collection(scope, name);
    const { fromSeq, ...rest } = query;
    const found = coll.page(rest);
    if (found !== 'unknown-cursor' || fromSeq === undefined) return plainPage(found);
    // The object a walk stood on was deleted meanwhile (and forgotten): on from its seq.
    const { after: _after, ...from } = rest;
    if (query.order === 'desc')
      return plainPage(coll.page({ ...from, maxSeq: Math.min(from.maxSeq ?? fromSeq, fromSeq - 1) }));
    return plainPage(coll.page({ ...from, test: (o) => o.seq > fromSeq }));
  };

  const run = (op: string, a: unknown[]): unknown => {
    const scope = a[0] as string;
    const name = a[1] as string;
    const coll = () => store.collection(scope, name);
    switch (op) {
      case 'get': {
        const found = coll().get(a[2] as string);
        return found === undefined ? undefined : plain(found);
      }
      case 'create': {
        const made = coll().create(a[2] as never, a[3] as never);
        return made === undefined ? undefined : plain(made);
      }
      case 'replace': {
        const written = coll().replace(a[2] as string, a[3] as number, a[4] as string, a[5] as number, a[6] as never);
        return written === undefined || written === 'conflict' ? written : plain(written);
      }
      case 'delete': {
        const gone = coll().delete(a[2] as string);
        return gone === undefined ? undefined : plain(gone);
      }
      case 'page':
        return page(scope, name, a[2] as WireQuery);
      case 'count':
        return coll().count(a[2] as never);
      case 'lastSeq':
        return coll().lastSeq();
      case 'ticket': {
        const key = `${scope}\u0000${name}`;
        const n = Math.max((draws.get(key) ?? 0) + 1, coll().lastSeq() + 1);
        draws.set(key, n);
        return n;
      }
      case 'all':
        return coll().all().map(plain);
      case 'history':
        return coll().history(a[2] as string);
      case 'tag':
        return coll().tag(a[2] as string, a[3] as number, a[4] as number);
      case 'markSeeded':
        return store.markSeeded(scope, name);
      case 'clear': {
        const names = (a[1] ?? undefined) as string[] | undefined; // (undefined crosses as null)
        for (const key of [...draws.keys()])
          if (key.startsWith(`${scope}\u0000`) && (names === undefined || names.includes(key.slice(scope.length + 1))))
            draws.delete(key);
        return store.clear(scope, names);
      }
      case 'schedule':
        return store.schedule(a[0] as never, (a[1] ?? undefined) as number | undefined);
      case 'takeDue':
        return store.takeDue(a[0] as number, a[1] as number);
      case 'nextDue':
        return store.nextDue();
      case 'claimKey':
        return store.claimKey(scope, a[1] as string, a[2] as string, a[3] as number, a[4] as number);
      case 'completeKey':
        return store.completeKey(scope, a[1] as string, a[2] as string, a[3] as never, a[4] as number, a[5] as number);
      case 'releaseKey':
        return store.releaseKey(scope, a[1] as string);
      case 'clearKeys':
        return store.clearKeys(scope);
      default:
        throw new Error(`unknown resource store operation ${op}`);
    }
  };

  return {
    receive(worker, message) {
      if (!isStoreRequest(message)) return false;
      let reply: StoreReply;
      try {
        reply = { type: 'mockapi:stored', id: message.id, result: run(message.op, message.args) };
      } catch (err) {
        reply = { type: 'mockapi:stored', id: message.id, error: (err as Error).message };
      }
      // A worker gone meanwhile: the send's callback takes the EPIPE (no 'error' event that would end the primary).
      if (worker.isConnected()) worker.send(reply, ignoreGone);
      return true;
    },
    async load(configDir, logger) {
      await loadResources(resourcesFile(configDir), store, Date.now(), logger);
    },
    async save(configDir, logger) {
      await saveResources(resourcesFile(configDir), store, configDir).catch((err: Error) =>
        logger.warn(`could not write ${resourcesFile(configDir)}: ${err.message}`),
      );
    },
  };
}

function ignoreGone(): void {}
