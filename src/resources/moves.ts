import type { CompiledResource } from './compile.js';
import { ResourceContext } from './context.js';
import type { ResourceEngine, ResourceEngineOptions } from './engine.js';
import { sendEvents } from './events.js';
import { moveTarget, nextMove } from './lifecycle.js';
import { isPlainObject, mergeFields } from './merge.js';
import type { StoredObject } from './store.js';

type Obj = Record<string, unknown>;

/** Moves taken from the store at a time, until none is due. */
const BATCH = 100;
/** A shared store's moves may be scheduled by other processes: looked for at least this often. */
const SHARED_POLL_MS = 1000;
/** Longest a timer can wait (Node's limit). */
const MAX_TIMER_MS = 2_147_483_647;

/**
 * The lifecycle on the server clock: after every write the object's next move is scheduled in the
 * store; a timer runs the moves due (and a moved virtual clock runs every move it passed, in
 * order). A read of an object first takes the moves it is due, so what a request sees never lags
 * the clock. A move writes naming the version it read: of two processes, one moves the object and
 * sends its events.
 */
export class Lifecycle {
  private timer: NodeJS.Timeout | undefined;
  private armedFor: number | undefined;
  private poll: NodeJS.Timeout | undefined;
  private running: Promise<void> | undefined;
  private again = false;
  private closed = false;

  constructor(
    private readonly engine: ResourceEngine,
    private readonly options: ResourceEngineOptions,
  ) {}

  /**
   * Schedules the object's next move (none for a deleted object). The schedule is on the server's
   * clock: a move of a session whose own clock stands elsewhere is placed where the server's clock
   * will be when the session's reaches it (placed again when either clock moves).
   */
  async schedule(scope: string, resource: CompiledResource, object: StoredObject, gone: boolean): Promise<void> {
    const next = gone ? undefined : nextMove(resource, JSON.parse(object.text) as Obj, object.since);
    const due = next === undefined ? undefined : next.due - (this.engine.now(scope) - this.options.clock());
    await this.options.store.schedule(
      { scope, collection: resource.name, id: object.id, version: object.version },
      due,
    );
    if (due !== undefined) this.armAt(due);
  }

  /** Places the object's pending move again (its session's clock is not there yet). */
  private async placeAgain(scope: string, resource: CompiledResource, id: string): Promise<void> {
    const found = await this.options.store.collection(scope, resource.name).get(id);
    if (found !== undefined) await this.schedule(scope, resource, found, false);
  }

  /** A session's own clock moved: every object of its collections takes the moves it passed, and the rest is placed again. */
  async movedIn(scope: string): Promise<void> {
    for (const resource of this.engine.collections) {
      if (resource.moves.length === 0) continue;
      for (const object of await this.options.store.collection(scope, resource.name).all()) {
        if (!(await this.catchUp(scope, resource, object.id, this.engine.now(scope))))
          await this.placeAgain(scope, resource, object.id);
      }
    }
  }

  /** Sets the timer for the earliest move due in the store (and, with a shared store, a poll). */
  arm(): void {
    if (this.closed) return;
    const due = this.options.store.nextDue();
    if (due instanceof Promise)
      void due.then(
        (d) => d !== undefined && this.armAt(d),
        () => {},
      );
    else if (due !== undefined) this.armAt(due);
    // (none while no collection has moves: a worker without resources asks nothing of the primary)
    if (
      this.options.store.shared &&
      this.poll === undefined &&
      this.engine.collections.some((r) => r.moves.length > 0)
    ) {
      this.poll = setInterval(() => void this.runDue(this.options.clock()).catch(() => {}), SHARED_POLL_MS);
      this.poll.unref();
    }
  }

  private armAt(due: number): void {
    if (this.closed || (this.armedFor !== undefined && this.armedFor <= due)) return;
    clearTimeout(this.timer);
    this.armedFor = due;
    const wait = Math.min(Math.max(0, due - this.options.clock()), MAX_TIMER_MS);
    this.timer = setTimeout(() => {
      this.armedFor = undefined;
      void this.runDue(this.options.clock()).then(
        () => this.arm(),
        (err: Error) => this.options.logger.warn(`resources: a lifecycle move failed: ${err.message}`),
      );
    }, wait);
    this.timer.unref();
  }

  /** Whether a move may be due by `now` (a shared store: maybe; in memory: the earliest scheduled says). */
  anyDue(now: number): boolean {
    const due = this.options.store.nextDue();
    return due instanceof Promise || (due !== undefined && due <= now);
  }

  /** Whether the object may have a move due by `now` (in memory: read and computed at once). */
  mayBeDue(scope: string, resource: CompiledResource, id: string, now: number): boolean {
    if (this.options.store.shared) return true;
    const found = this.options.store.collection(scope, resource.name).get(id);
    if (found instanceof Promise) return true;
    if (found === undefined) return false;
    const next = nextMove(resource, JSON.parse(found.text) as Obj, found.since);
    return next !== undefined && next.due <= now;
  }

  /** Runs every move due by `now`, earliest first (moves they lead to included). */
  runDue(now: number): Promise<void> {
    if (this.running !== undefined) {
      this.again = true;
      return this.running;
    }
    this.running = (async () => {
      do {
        this.again = false;
        for (;;) {
          const due = await this.options.store.takeDue(now, BATCH);
          if (due.length === 0) break;
          for (const move of due) {
            const resource = this.engine.collection(move.collection);
            if (resource === undefined) continue;
            // Due on the server's clock; taken on its session's (a clock moved since it was placed: placed again).
            if (!(await this.catchUp(move.scope, resource, move.id, this.engine.now(move.scope))))
              await this.placeAgain(move.scope, resource, move.id);
          }
        }
      } while (this.again);
    })().finally(() => (this.running = undefined));
    return this.running;
  }

  /** Takes every move of one object due by `now` (on its session's clock), in order; true when it took one (or the object is gone). */
  async catchUp(scope: string, resource: CompiledResource, id: string, now: number): Promise<boolean> {
    const coll = this.options.store.collection(scope, resource.name);
    let moved = false;
    for (let step = 0; step < 100; step++) {
      const found = await coll.get(id);
      if (found === undefined) return true;
      const object = JSON.parse(found.text) as Obj;
      const next = nextMove(resource, object, found.since);
      if (next === undefined || next.due > now) return moved;
      const seed = this.options.seed();
      const to = moveTarget(next.move, seed, resource.name, id);
      const ctx = new ResourceContext({
        params: { id },
        query: '',
        headers: {},
        body: undefined,
        n: found.seq,
        now: next.due,
        state: this.options.states?.(scope) ?? {},
        seed,
        randomKey: `resource ${resource.name} lifecycle`,
        resource: object,
        resources: this.engine.view.of(scope, this.engine.names),
      });
      let changed: Obj = { ...object, [next.move.field]: to };
      if (next.move.set !== undefined) {
        const set = next.move.set.evaluate(ctx);
        if (isPlainObject(set)) changed = mergeFields(changed, set);
      }
      changed.id = object.id;
      const written = await coll.replace(id, found.version, JSON.stringify(changed), next.due, {
        at: next.due,
        kind: 'lifecycle',
        detail: `${String(object[next.move.field])} → ${to}`,
      });
      if (written === undefined) return true;
      if (written === 'conflict') continue; // another write (or process) came first: look again
      moved = true;
      await this.engine.written(scope, resource, written);
      sendEvents(this.options.events, next.move.send, changed, ctx, resource.style.envelope, null, scope);
    }
    return moved;
  }

  close(): void {
    this.closed = true;
    clearTimeout(this.timer);
    clearInterval(this.poll);
  }
}
