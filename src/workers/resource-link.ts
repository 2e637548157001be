import { ResourceStoreError } from '../resources/redis-connection.js';
import type { CollectionStore, DueMove, IdempotencyRecord, ResourceStore, SavedAnswer } from '../resources/store.js';
import { LinkCollection } from './resource-link-collection.js';
import { isStoreReply, type StoreRequest } from './resource-messages.js';

/** Sends one operation to the primary; resolves with its result. */
export type Ask = <T>(op: string, args: unknown[]) => Promise<T>;

/** The way to the primary: a worker's IPC channel ({@link linkedResourceStore}), or a test's. */
export interface StoreChannel {
  readonly connected: boolean;
  /** Sends a request; `failed` is called with the error when it could not be sent (else with null). */
  send(message: StoreRequest, failed: (err: Error | null) => void): void;
  /** Hears every message, and the channel's end; returns the way to stop. */
  listen(onMessage: (message: unknown) => void, onGone: () => void): () => void;
}

/**
 * The resource store of a `serve --workers` worker without a shared store: every operation is a
 * request to the primary over the cluster IPC channel (resource-host.ts keeps the objects there),
 * its reply matched by the request's number. Shared as Redis is: reads answer later, the lifecycle
 * polls for moves other workers scheduled, and what another worker wrote is seen at once.
 */
export class LinkedResourceStore implements ResourceStore {
  readonly shared = true;
  private nextId = 0;
  private readonly pending = new Map<number, { done: (value: unknown) => void; fail: (err: Error) => void }>();
  private readonly onMessage = (message: unknown): void => {
    if (!isStoreReply(message)) return;
    const waiting = this.pending.get(message.id);
    if (waiting === undefined) return;
    this.pending.delete(message.id);
    if (message.error !== undefined)
      waiting.fail(new ResourceStoreError(`the primary's resource store: ${message.error}`));
    else waiting.done(message.result);
  };
  private readonly stop: () => void;

  /** `batch`: candidates per round trip of a filtered walk (resource-link-collection.ts; a test's smaller). */
  constructor(
    private readonly channel: StoreChannel,
    private readonly batch?: number,
  ) {
    this.stop = channel.listen(this.onMessage, () => this.failAll());
  }

  readonly ask: Ask = <T>(op: string, args: unknown[]): Promise<T> => {
    if (!this.channel.connected) return Promise.reject(new ResourceStoreError('the primary process is gone'));
    const id = ++this.nextId;
    return new Promise<T>((done, fail) => {
      this.pending.set(id, { done: done as (value: unknown) => void, fail });
      this.channel.send({ type: 'mockapi:store', id, op, args }, (err) => {
        if (err === null || !this.pending.delete(id)) return;
        fail(new ResourceStoreError(`the primary process is gone: ${err.message}`));
      });
    });
  };

  private failAll(): void {
    for (const waiting of this.pending.values()) waiting.fail(new ResourceStoreError('the primary process is gone'));
    this.pending.clear();
  }

  collection(scope: string, name: string): CollectionStore {
    return new LinkCollection(this.ask, scope, name, this.batch);
  }

  markSeeded(scope: string, name: string): Promise<boolean> {
    return this.ask('markSeeded', [scope, name]);
  }

  clear(scope: string, names?: readonly string[]): Promise<void> {
    return this.ask('clear', [scope, names]);
  }

  schedule(move: Omit<DueMove, 'due'>, due: number | undefined): Promise<void> {
    return this.ask('schedule', [move, due]);
  }

  takeDue(now: number, limit: number): Promise<readonly DueMove[]> {
    return this.ask('takeDue', [now, limit]);
  }

  async nextDue(): Promise<number | undefined> {
    return (await this.ask<number | null | undefined>('nextDue', [])) ?? undefined;
  }

  claimKey(
    scope: string,
    key: string,
    fingerprint: string,
    now: number,
    ttlMs: number,
  ): Promise<IdempotencyRecord | undefined> {
    return this.ask('claimKey', [scope, key, fingerprint, now, ttlMs]);
  }

  completeKey(
    scope: string,
    key: string,
    fingerprint: string,
    answer: SavedAnswer,
    now: number,
    ttlMs: number,
  ): Promise<void> {
    return this.ask('completeKey', [scope, key, fingerprint, answer, now, ttlMs]);
  }

  releaseKey(scope: string, key: string): Promise<void> {
    return this.ask('releaseKey', [scope, key]);
  }

  clearKeys(scope: string): Promise<void> {
    return this.ask('clearKeys', [scope]);
  }

  close(): Promise<void> {
    this.stop();
    this.failAll();
    return Promise.resolve();
  }
}

/** The store of a worker of `serve --workers` without a shared store; undefined outside a worker. */
export function linkedResourceStore(): LinkedResourceStore | undefined {
  const send = process.send?.bind(process);
  if (send === undefined) return undefined;
  return new LinkedResourceStore({
    get connected() {
      return process.connected;
    },
    // A channel closing meanwhile: the callback takes the error (no 'error' event), and the request fails.
    send: (message, failed) => send(message, undefined, undefined, failed),
    listen(onMessage, onGone) {
      process.on('message', onMessage);
      process.on('disconnect', onGone);
      return () => {
        process.off('message', onMessage);
        process.off('disconnect', onGone);
      };
    },
  });
}
