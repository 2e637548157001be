import type { ConfigHolder } from '../answer/config-runtime.js';
import type { ResourceView } from '../expression/context.js';
import type { Clock } from '../clock.js';
import type { RouteTable } from '../control/admin-api.js';
import type { Config } from '../config/types.js';
import type { Logger } from '../logger.js';
import { ControlError } from '../control/control-error.js';
import { ResourceAdmin } from './admin.js';
import { resourceCalls, type ResourceCalls } from './calls.js';
import { ResourceEngine } from './engine.js';
import type { EventSink, ResourceEvent } from './events.js';
import { MemoryResourceStore } from './memory-store.js';
import { loadResources, resourcesFile, saveResources } from './persist.js';
import { ResourceStoreError } from './redis-connection.js';
import { resourceRoutes } from './routes.js';
import type { ResourceStore } from './store.js';
import type { CollectionInfo } from './admin.js';

export type { CollectionCalls, ResourceCalls } from './calls.js';
export type { CollectionContents, CollectionInfo } from './admin.js';
export type { HistoryEntry } from './store.js';
export { httpResourceCalls } from './calls.js';

/** The webhook service as resources use it: events made here, sent to one target. */
export interface ResourceWebhooks {
  emit(event: ResourceEvent, afterMs: number): string;
}

export interface ResourcesOptions {
  holder: ConfigHolder;
  /** The server's clock (the default session's). */
  clock: Clock;
  /** A named session's clock, by its id (src/sessions): its objects are made, listed and moved on it. */
  clockOf?: (scope: string) => Clock;
  seed: () => number;
  logger: Logger;
  webhooks?: ResourceWebhooks;
  /** Scenario states of a session (`state.<name>` in a resource's expressions), by its id (`''`: the default session). */
  states?: (scope: string) => Readonly<Record<string, string>>;
  /** A shared store (Redis) for `--workers` and fleets; default: memory. */
  store?: ResourceStore;
}

/** The resources of one server: the engine the request steps ask, the admin routes, the calls, reset and stop. */
export interface Resources {
  readonly engine: ResourceEngine;
  readonly store: ResourceStore;
  /** Takes the config now served (start and each reload). */
  follow(config: Config): Promise<void>;
  routes(): RouteTable;
  calls(): { resources: ResourceCalls; resourceCollections(): Promise<CollectionInfo[]> };
  /**
   * `reset` part `resources`: the collections back to their seed, idempotency keys forgotten.
   * `cleared` runs once the store emptied them, before the seed (a reset puts the clock back there:
   * the seed reads it). A store that cannot be reached rejects with a 503 `store_unavailable`
   * {@link ControlError}; when it failed on the first command, nothing was changed.
   */
  reset(scope?: string, cleared?: () => void): Promise<void>;
  /** What `resources.<name>` reads in the answers of `endpoints:` (a shared store's: what this process loaded last). */
  view(scope: string): ResourceView;
  /** Another worker reset the shared store: drop what this process keeps of it. */
  forget(scope?: string): void;
  /** A session was dropped: its objects and idempotency keys go, nothing is seeded again. */
  drop(scope: string): Promise<void>;
  clockMoved(): void;
  /** A session's own clock moved: the lifecycle moves its objects passed. */
  clockMovedIn(scope: string): Promise<void>;
  /** Writes `.mockapi/resources.json` when `resources.persist` is on, and stops the timers. */
  close(): Promise<void>;
}

/** The sink of the events of actions and lifecycle moves: the webhook service, the targets and templates served now. */
function eventSink(holder: ConfigHolder, webhooks: ResourceWebhooks | undefined): EventSink | undefined {
  if (webhooks === undefined) return undefined;
  return {
    emit: (event, afterMs) => webhooks.emit(event, afterMs),
    targets: () => [...(holder.current.webhooks?.targets.values() ?? [])].filter((t) => !t.disabled).map((t) => t.name),
    envelope: (type) => holder.current.webhooks?.events.get(type)?.envelope,
  };
}

/** Turns a store that could not answer into the reset's 503; `state` says where the reset stopped. */
function storeUnavailable(state: string): (err: unknown) => never {
  return (err) => {
    if (!(err instanceof ResourceStoreError)) throw err;
    throw new ControlError(503, 'store_unavailable', `${err.message}: ${state}; repeat the call once it is back`);
  };
}

/** Builds the resources of a server over its config; reads `.mockapi/resources.json` when `persist` is on. */
export async function createResources(options: ResourcesOptions): Promise<Resources> {
  const { holder, clock, logger } = options;
  const store = options.store ?? new MemoryResourceStore();
  const events = eventSink(holder, options.webhooks);
  const engine = new ResourceEngine({
    store,
    clock,
    seed: options.seed,
    logger,
    ...(events === undefined ? {} : { events }),
    ...(options.states === undefined ? {} : { states: options.states }),
    ...(options.clockOf === undefined ? {} : { clockOf: options.clockOf }),
  });
  const admin = new ResourceAdmin(engine);
  const initial = holder.current.config;
  const persisting = (config: Config): boolean =>
    config.resources?.persist === true && store instanceof MemoryResourceStore;
  if (persisting(initial))
    await loadResources(resourcesFile(initial.dir), store as MemoryResourceStore, clock(), logger);
  await engine.follow(initial);
  // Objects read back from the file take their lifecycle where they left it.
  for (const resource of engine.collections) {
    if (resource.moves.length === 0) continue;
    for (const object of await store.collection('', resource.name).all()) await engine.written('', resource, object);
  }

  return {
    engine,
    store,
    follow: (config) => engine.follow(config),
    routes: () => resourceRoutes(admin),
    calls: () => resourceCalls(admin),
    async reset(scope = '', cleared) {
      // The store first: when it cannot be reached, the caller has changed nothing yet either.
      await Promise.resolve(store.clear(scope)).catch(
        storeUnavailable('the collections may not be reset, nothing else was'),
      );
      await Promise.resolve(store.clearKeys(scope)).catch(
        storeUnavailable('the collections were emptied, not seeded again; nothing else was reset'),
      );
      engine.view.forget(scope);
      engine.seeder.forget(scope);
      cleared?.();
      await engine.seeder.seedAll(scope).catch(storeUnavailable('the collections were emptied, not all seeded again'));
    },
    view: (scope) => engine.view.scoped(scope, () => engine.names),
    forget(scope = '') {
      engine.view.forget(scope);
      engine.seeder.forget(scope);
    },
    async drop(scope) {
      await store.clear(scope);
      await store.clearKeys(scope);
      engine.view.forget(scope);
      engine.seeder.forget(scope);
    },
    clockMoved: () => engine.clockMoved(),
    clockMovedIn: (scope) => engine.clockMovedIn(scope),
    async close() {
      engine.close();
      const config = holder.current.config;
      if (persisting(config)) {
        await saveResources(resourcesFile(config.dir), store as MemoryResourceStore, config.dir).catch((err: Error) =>
          logger.warn(`could not write ${resourcesFile(config.dir)}: ${err.message}`),
        );
      }
      await store.close();
    },
  };
}
