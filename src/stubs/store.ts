import { randomBytes } from 'node:crypto';
import { STUB_KEY_PREFIX } from '../answer/answer-state.js';
import { compileEndpoint, styleExtras, type CompiledEndpoint } from '../answer/compile.js';
import type { ConfigHolder } from '../answer/config-runtime.js';
import type { AnswerParts } from '../answer/parts.js';
import { loadFaker } from '../expression/faker.js';
import type { Config } from '../config/types.js';
import type { Logger } from '../logger.js';
import { createLimitStyle } from '../pipeline/limit-headers.js';
import { createStubRouter, type RoutedStub } from './stub-router.js';
import { StubInvalidError } from './stub-error.js';
import { checkStub, type StubRequest } from './validate.js';
import { stubValidation } from './stub-validation.js';

/** A stub as the admin API shows it (`GET /__mockapi/stubs`). */
export interface StubInfo {
  id: string;
  name: string | null;
  /** The endpoint as it was sent. */
  endpoint: Record<string, unknown>;
  /** How many answers it was added for; null when it answers until removed. */
  times: number | null;
  /** How many answers it has left; null when it answers until removed. */
  remaining: number | null;
  /** Requests it matched. */
  hits: number;
}

/** The answer of `POST /__mockapi/stubs`. */
export type StubCreated = Omit<StubInfo, 'hits'>;

/** What travels to the other workers of `serve --workers`: enough to build the same stub there. */
export interface StubRecord {
  id: string;
  seq: number;
  name: string | null;
  endpoint: Record<string, unknown>;
  times: number | null;
}

interface Stub extends RoutedStub {
  readonly record: StubRecord;
  compiled: CompiledEndpoint;
  remaining: number | null;
  hits: number;
}

/** The run-time stubs of a server, matched before the config's endpoints, newest first. */
export interface StubStore {
  /** Checks, compiles and adds a stub; rejects with {@link StubInvalidError}. */
  add(body: Record<string, unknown>): Promise<StubCreated>;
  /** Adds a stub another worker checked (same id and order); resolves once it is served. */
  adopt(record: StubRecord): Promise<void>;
  /** Every stub, newest first. */
  list(): StubInfo[];
  /** What another worker needs to build the stub `id`. */
  record(id: string): StubRecord | undefined;
  /** Removes one stub; false when there is none with that id. */
  remove(id: string): boolean;
  /** Removes every stub; returns how many there were. */
  clear(): number;
  /**
   * The "stub match" step: the newest stub for this request, one of its `times` used up (the stub
   * goes once none is left). Undefined when no stub matches: the config's endpoints are next.
   */
  take(method: string, path: string): CompiledEndpoint | undefined | Promise<CompiledEndpoint | undefined>;
  /** The stub that `take` would give, without using it up (whether its answers read the body). */
  peek(method: string, path: string): CompiledEndpoint | undefined;
  /** Recompiles every stub for a newly served config (its limits, CORS and scenarios). */
  follow(config: Config): Promise<void>;
  readonly size: number;
  /** Whether a stub has a rate limit of its own (`limits.rateLimit`): the limits step then asks which endpoint a request is headed for. */
  readonly limited: boolean;
}

export interface StubStoreOptions {
  holder: ConfigHolder;
  /** The capabilities' compile steps a stub's answers are compiled with, as the config's. */
  parts: AnswerParts;
  logger: Logger;
  /** Called with the key of a stub that is gone, so its sequence counters go too. */
  forget?(key: string): void;
  env?: Readonly<Record<string, string | undefined>>;
  /**
   * With `serve --workers` (or a fleet): takes one answer of a stub with `times` from the primary (or
   * Redis), which owns the count; resolves to the count left, or null when none was left (another
   * worker took the last). `remaining` is this process's own count of it.
   */
  claim?(id: string, remaining: number): Promise<number | null>;
  /** On a fleet: told each answer of a stub that `claim` does not count (one without `times`), so its hits are every host's. */
  hit?(id: string): void;
  /** Folders beside the config's own that a stub's `bodyFile` may lead to through a link (the test helpers: the original config's folder). */
  linkedFolders?: readonly string[];
}

/** `stub <name|id>: GET /x`: how the journal, logs and counters name a stub's endpoint. */
export function stubKey(record: Pick<StubRecord, 'id' | 'name'>, method: string, path: string): string {
  return `${STUB_KEY_PREFIX}${record.name ?? record.id}: ${method} ${path}`;
}

/** Builds the stub store of a server over the config it serves. */
export function createStubStore(options: StubStoreOptions): StubStore {
  const { holder, logger } = options;
  const env = options.env ?? process.env;
  const router = createStubRouter<Stub>();
  const byId = new Map<string, Stub>();
  const named = new Map<string, Stub>(); // by name: a name names one stub
  let seq = 0;
  /** How many stubs have a rate limit of their own. */
  let limitedCount = 0;
  const recount = (): void => {
    limitedCount = 0;
    for (const stub of byId.values()) if (stub.compiled.rateLimit !== undefined) limitedCount++;
  };

  async function compile(request: StubRequest, record: StubRecord, config: Config): Promise<CompiledEndpoint> {
    const key = stubKey(record, request.endpoint.method, request.endpoint.path);
    const compiled = await compileEndpoint(
      request.endpoint,
      config,
      env,
      createLimitStyle(config.limits, styleExtras(config)),
      options.parts,
      key,
    );
    if (compiled.dynamic?.usesFaker === true) await loadFaker();
    // Validated against the config's OpenAPI description like a config endpoint (its `openapi:`, else its route).
    const validation = await stubValidation(config, request.endpoint);
    if (validation !== undefined) compiled.validation = validation;
    return compiled;
  }

  function check(body: Record<string, unknown>, names: { has(name: string): boolean }): StubRequest {
    const checked = checkStub(body, holder.current.config, names, options.linkedFolders);
    if (!checked.ok) throw new StubInvalidError(checked.issues);
    return checked.stub;
  }

  function place(request: StubRequest, record: StubRecord, compiled: CompiledEndpoint): Stub {
    const stub: Stub = {
      method: request.endpoint.method,
      path: request.endpoint.path,
      seq: record.seq,
      record,
      compiled,
      remaining: record.times,
      hits: 0,
    };
    seq = Math.max(seq, record.seq);
    byId.set(record.id, stub);
    if (compiled.rateLimit !== undefined) limitedCount++;
    if (record.name !== null) named.set(record.name, stub);
    router.add(stub);
    return stub;
  }

  function drop(stub: Stub): void {
    if (byId.delete(stub.record.id) && stub.compiled.rateLimit !== undefined) limitedCount--;
    if (stub.record.name !== null && named.get(stub.record.name) === stub) named.delete(stub.record.name);
    router.remove(stub);
    options.forget?.(stub.compiled.key);
  }

  const NO_NAMES = new Set<string>();

  function find(method: string, path: string): Stub | undefined {
    if (router.size === 0) return undefined;
    const found = router.match(method, path);
    if (found !== undefined || method !== 'HEAD') return found;
    // HEAD falls back to GET, unless the config has a HEAD endpoint for this path.
    const index = holder.current.router.match('HEAD', path);
    if (index !== undefined && holder.current.endpoints[index]?.method === 'HEAD') return undefined;
    return router.match('GET', path);
  }

  function take(method: string, path: string): CompiledEndpoint | undefined | Promise<CompiledEndpoint | undefined> {
    const stub = find(method, path);
    if (stub === undefined) return undefined;
    if (stub.remaining !== null && options.claim !== undefined) return claimed(stub, options.claim, method, path);
    stub.hits++;
    options.hit?.(stub.record.id);
    // Used up on arrival: concurrent requests each find the count as the one before left it.
    if (stub.remaining !== null && --stub.remaining <= 0) drop(stub);
    return stub.compiled;
  }

  async function claimed(
    stub: Stub,
    claim: (id: string, remaining: number) => Promise<number | null>,
    method: string,
    path: string,
  ): Promise<CompiledEndpoint | undefined> {
    const left = await claim(stub.record.id, stub.remaining ?? 0);
    if (left === null) {
      // Another worker took its last answer: the next stub, or the config's endpoint, answers.
      if (byId.get(stub.record.id) === stub) drop(stub);
      return take(method, path);
    }
    stub.hits++;
    stub.remaining = left;
    if (left <= 0 && byId.get(stub.record.id) === stub) drop(stub);
    return stub.compiled;
  }

  return {
    get size() {
      return byId.size;
    },
    get limited() {
      return limitedCount > 0;
    },
    async add(body) {
      const request = check(body, named);
      const record: StubRecord = {
        id: randomBytes(6).toString('hex'),
        seq: 0,
        name: request.name ?? null,
        endpoint: request.raw,
        times: request.times ?? null,
      };
      const compiled = await compile(request, record, holder.current.config);
      // Two adds at once with one name: the later one is refused as the first check would have.
      if (record.name !== null && named.has(record.name)) check(body, named);
      // Ordered when it starts to answer, not when it was sent: the newest stub is the last added.
      const { hits: _hits, ...created } = info(place(request, { ...record, seq: seq + 1 }, compiled));
      return created;
    },
    async adopt(record) {
      if (byId.has(record.id)) return;
      const request = check(
        { endpoint: record.endpoint, ...(record.times === null ? {} : { times: record.times }) },
        NO_NAMES,
      );
      const compiled = await compile(request, record, holder.current.config);
      if (!byId.has(record.id)) place({ ...request, name: record.name ?? undefined }, record, compiled);
    },
    list: () => [...byId.values()].sort((a, b) => b.seq - a.seq).map(info),
    record: (id) => byId.get(id)?.record,
    remove(id) {
      const stub = byId.get(id);
      if (stub === undefined) return false;
      drop(stub);
      return true;
    },
    clear() {
      const count = byId.size;
      for (const stub of byId.values()) options.forget?.(stub.compiled.key);
      byId.clear();
      named.clear();
      router.clear();
      limitedCount = 0;
      return count;
    },
    take,
    peek: (method, path) => find(method, path)?.compiled,
    async follow(config) {
      await Promise.all(
        [...byId.values()].map(async (stub) => {
          try {
            const request = check({ endpoint: stub.record.endpoint }, NO_NAMES);
            stub.compiled = await compile(request, stub.record, config);
          } catch (err) {
            logger.warn(
              `stub ${stub.record.name ?? stub.record.id} keeps answering as before the reload: ${(err as Error).message}`,
            );
          }
        }),
      );
      recount();
    },
  };
}

function info(stub: Stub): StubInfo {
  const { id, name, endpoint, times } = stub.record;
  return { id, name, endpoint, times, remaining: stub.remaining, hits: stub.hits };
}
