import { loadFaker } from '../expression/index.js';
import type { Clock } from '../clock.js';
import type { Config } from '../config/types.js';
import type { Logger } from '../logger.js';
import type { ResourceAnswer } from './answers.js';
import { compileResources, type CompiledResource } from './compile.js';
import { EngineCall, runOperation, withWrites } from './engine-call.js';
import { matchResource, type ResourceMatch } from './engine-match.js';
import type { EventSink } from './events.js';
import { Lifecycle } from './moves.js';
import type { ResourceRequest } from './operations.js';
import { ResourceStoreError } from './redis-connection.js';
import { Seeder } from './seeder.js';
import type { MaybePromise, ResourceStore, StoredObject } from './store.js';
import { CollectionsView } from './view.js';

export type { Operation, ResourceMatch } from './engine-match.js';
export type { ResourceRequest };

/**
 * How many `METHOD path` matches the engine remembers: a request's steps ask up to three times
 * (body, idempotency, answer) and clients repeat paths; requests over many paths (a retrieve of
 * each of 100,000 objects) empty it when it is full, so it stays small.
 */
const MATCHES_MAX = 1_000;

export interface ResourceEngineOptions {
  store: ResourceStore;
  /** The server's clock (the default session's): lifecycle timers run on it. */
  clock: Clock;
  /** A session's own clock (src/sessions), by its scope; default: the server's. */
  clockOf?: (scope: string) => Clock;
  /** The seed in use (ids, fields and weighted moves follow it). */
  seed: () => number;
  events?: EventSink;
  /** Scenario states of a scope (its session's), for `state.<name>` in a resource's expressions. */
  states?: (scope: string) => Readonly<Record<string, string>>;
  logger: Logger;
}

/**
 * The resources of one server: which requests they answer, the operations, the lifecycle on the
 * server clock, and the seed objects. Follows the config served (a reload keeps every object; a
 * changed `fields` does not rewrite objects already made); the objects live in the store.
 */
export class ResourceEngine {
  private compiled: CompiledResource[] = [];
  private byName = new Map<string, CompiledResource>();
  /** Form-typing hints from the OpenAPI description, by `<name> create` / `<name> update`. */
  private hints = new Map<string, Record<string, unknown>>();
  private collectionNames = new Set<string>();
  /** Matches of the collections configured now, by `METHOD path` (null: none answers it); a reload empties it. */
  private matches = new Map<string, ResourceMatch | null>();
  /** The last match asked for (a reload forgets it with `matches`). */
  private lastMatch:
    { readonly method: string; readonly path: string; readonly found: ResourceMatch | undefined } | undefined;
  /** The names configured now, as the scope's kept view reads them (made once: no closure per request). */
  private readonly known = (): ReadonlySet<string> => this.collectionNames;
  readonly view: CollectionsView;
  readonly lifecycle: Lifecycle;
  readonly seeder: Seeder;

  constructor(readonly options: ResourceEngineOptions) {
    this.view = new CollectionsView(options.store);
    this.lifecycle = new Lifecycle(this, options);
    this.seeder = new Seeder(this, options);
    options.store.onReconnect?.(() => {
      this.seeder.forgetAll();
      this.view.forgetAll();
    });
  }

  get store(): ResourceStore {
    return this.options.store;
  }

  /** The collections configured now. */
  get collections(): readonly CompiledResource[] {
    return this.compiled;
  }

  /** The names of the collections configured now. */
  get names(): ReadonlySet<string> {
    return this.collectionNames;
  }

  collection(name: string): CompiledResource | undefined {
    return this.byName.get(name);
  }

  /** Takes the collections of `config` (at start and on each reload) and seeds those never seeded. */
  async follow(config: Config): Promise<void> {
    const compiled = compileResources(config.resources, Object.keys(config.scenarios));
    if (compiled.length > 0 && JSON.stringify(config.resources).includes('fake.')) await loadFaker();
    // Form values typed by the operation's OpenAPI schema too (`openapi.spec`): loaded only then.
    this.hints =
      config.openapi === undefined || compiled.length === 0
        ? new Map()
        : await (await import('./schema-hints.js')).schemaHints(config, compiled);
    this.compiled = compiled;
    this.matches = new Map();
    this.lastMatch = undefined;
    this.byName = new Map(compiled.map((resource) => [resource.name, resource]));
    this.collectionNames = new Set(this.byName.keys());
    await this.seeder.seedAll('');
    this.lifecycle.arm();
  }

  /** The collection operation of `method` on `path` (after the base path), when a collection answers it. */
  match(method: string, path: string): ResourceMatch | undefined {
    if (this.compiled.length === 0) return undefined;
    // The steps of one request ask with the same strings: the last answer first, without a key to build and hash.
    const last = this.lastMatch;
    if (last !== undefined && last.path === path && last.method === method) return last.found;
    const key = `${method} ${path}`;
    let known = this.matches.get(key);
    if (known === undefined) {
      known = matchResource(this.compiled, method, path) ?? null;
      if (this.matches.size >= MATCHES_MAX) this.matches.clear();
      this.matches.set(key, known);
    }
    const found = known ?? undefined;
    this.lastMatch = { method, path, found };
    return found;
  }

  /**
   * Answers a request the engine matched: now when everything it needs is in memory, later when a
   * shared store, a first seed or a lifecycle move due has to be waited for.
   */
  handle(match: ResourceMatch, req: ResourceRequest): MaybePromise<ResourceAnswer> {
    const now = this.now(req.scope);
    const ready = this.prepare(match, req.scope, now);
    const answer =
      ready === undefined
        ? this.answer(match, req, now)
        : ready.then(() => this.answer(match, req, this.now(req.scope)));
    if (!(answer instanceof Promise)) return answer;
    // A store that failed may come back empty (a restarted Redis): its collections are seeded again on next use.
    return answer.catch((err: unknown) => {
      if (err instanceof ResourceStoreError) this.seeder.forget(req.scope);
      throw err;
    });
  }

  /** What must happen before the operation: the seed, the moves due, collections an expression reads; undefined when nothing. */
  private prepare(match: ResourceMatch, scope: string, now: number): Promise<void> | undefined {
    const { resource, path, operation } = match;
    const seeded = this.seeder.ensure(scope, resource.name);
    // (the schedule is kept on the server's clock: a session's moves are placed there by its own clock)
    const moves =
      path.id !== undefined
        ? resource.moves.length > 0 && this.lifecycle.mayBeDue(scope, resource, path.id, now)
        : operation === 'list' && this.lifecycle.anyDue(this.options.clock());
    const load = resource.readsCollections && this.options.store.shared;
    if (seeded === undefined && !moves && !load) return undefined;
    return (async () => {
      await seeded;
      if (moves && path.id !== undefined) await this.lifecycle.catchUp(scope, resource, path.id, now);
      else if (moves) await this.lifecycle.runDue(this.options.clock());
      if (load) await this.view.load(scope, [...this.collectionNames]);
    })();
  }

  private answer(match: ResourceMatch, req: ResourceRequest, now: number): MaybePromise<ResourceAnswer> {
    const { resource, operation } = match;
    const scope = req.scope;
    const call = new EngineCall(
      this,
      match,
      req,
      this.options.store.collection(scope, resource.name),
      now,
      this.options.seed(),
      this.options.events,
      this.view.scoped(scope, this.known),
      this.options.states?.(scope) ?? {},
      this.hints.size === 0
        ? undefined
        : this.hints.get(`${resource.name} ${operation === 'create' ? 'create' : 'update'}`),
    );
    const answer = runOperation(call, operation);
    return answer instanceof Promise ? answer.then((done) => withWrites(done, call)) : withWrites(answer, call);
  }

  /** Names the request (its journal id) in the history of what it wrote (at once in memory). */
  tag(scope: string, match: ResourceMatch, writes: readonly StoredObject[], request: number): MaybePromise<void> {
    const coll = this.options.store.collection(scope, match.resource.name);
    let pending: Promise<void> | undefined;
    for (const object of writes) {
      const done = coll.tag(object.id, object.version, request, object);
      if (done instanceof Promise) pending = pending === undefined ? done : pending.then(() => done);
    }
    return pending;
  }

  /** Told of every write: the collections view, and the object's next lifecycle move. */
  written(scope: string, resource: CompiledResource, object: StoredObject, gone = false): MaybePromise<void> {
    this.view.touch(scope, resource.name);
    if (resource.moves.length > 0) return this.lifecycle.schedule(scope, resource, object, gone);
  }

  /** An object of any collection of the scope with this id, as text (Stripe's `expand`). */
  async find(scope: string, id: string): Promise<string | undefined> {
    for (const resource of this.compiled) {
      const found = await this.options.store.collection(scope, resource.name).get(id);
      if (found !== undefined) return found.text;
    }
    return undefined;
  }

  /** The server's clock moved (a virtual clock set or advanced): the moves it passed, in order. */
  clockMoved(): void {
    // A shared store out of reach must not end the process: its poll takes the moves once it is back.
    void this.lifecycle.runDue(this.options.clock()).then(
      () => this.lifecycle.arm(),
      (err: Error) => this.options.logger.warn(`resources: a lifecycle move failed: ${err.message}`),
    );
  }

  /** A session's own clock moved: the moves its objects passed, in order, and the others placed again. */
  clockMovedIn(scope: string): Promise<void> {
    return this.lifecycle.movedIn(scope).then(() => this.lifecycle.arm());
  }

  /** Now, on the clock of `scope` (its session's). */
  now(scope: string): number {
    return scope === '' || this.options.clockOf === undefined ? this.options.clock() : this.options.clockOf(scope)();
  }

  close(): void {
    this.lifecycle.close();
  }
}
