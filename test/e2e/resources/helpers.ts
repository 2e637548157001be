// An engine over an in-memory store with a fake clock and a recording event sink: the operations
// of resources tested without HTTP.
import { configFromObject } from '../../../src/config/load.js';
import { silentLogger } from '../../../src/logger.js';
import { ResourceEngine } from '../../../src/resources/engine.js';
import type { ResourceEvent } from '../../../src/resources/events.js';
import { MemoryResourceStore } from '../../../src/resources/memory-store.js';
import type { ResourceStore } from '../../../src/resources/store.js';

export interface Answer {
  status: number;
  headers: Record<string, string>;
  body: string;
  json: any;
  label: string;
  notes: readonly string[];
}

export interface TestEngine {
  engine: ResourceEngine;
  store: ResourceStore;
  events: Array<{ event: ResourceEvent; afterMs: number }>;
  now(): number;
  /** Moves the clock; `run` false: without running the moves due (only reads take them). */
  advance(ms: number, run?: boolean): Promise<void>;
  call(
    method: string,
    url: string,
    body?: unknown,
    type?: string,
    headers?: Record<string, string>,
  ): Promise<Answer | undefined>;
}

export async function testEngine(
  config: Record<string, unknown>,
  options: { start?: number; seed?: number; store?: ResourceStore; targets?: string[] } = {},
): Promise<TestEngine> {
  const loaded = configFromObject({ apiKey: 'mk_resourcesEngine0000000000000001', ...config }, process.cwd());
  if (!loaded.ok) throw new Error(loaded.issues.map((i) => i.message).join('\n'));
  let now = options.start ?? Date.parse('2026-01-01T00:00:00Z');
  const events: TestEngine['events'] = [];
  const store = options.store ?? new MemoryResourceStore();
  const engine = new ResourceEngine({
    store,
    clock: () => now,
    seed: () => options.seed ?? 7,
    logger: silentLogger,
    events: {
      emit: (event, afterMs) => {
        events.push({ event, afterMs });
        return `webhook ${event.type} → ${event.target}`;
      },
      targets: () => options.targets ?? ['app'],
      envelope: () => undefined,
    },
  });
  await engine.follow(loaded.config);
  let requests = 0;
  return {
    engine,
    store,
    events,
    now: () => now,
    async advance(ms, run = true) {
      now += ms;
      if (run) await engine.lifecycle.runDue(now);
    },
    async call(method, url, body, type, headers = {}) {
      const at = url.indexOf('?');
      const path = at === -1 ? url : url.slice(0, at);
      const match = engine.match(method, path);
      if (match === undefined) return undefined;
      const bytes =
        body === undefined ? undefined : Buffer.from(typeof body === 'string' ? body : JSON.stringify(body));
      const contentType = type ?? (typeof body === 'string' ? 'application/x-www-form-urlencoded' : 'application/json');
      const answer = await engine.handle(match, {
        method,
        path,
        query: at === -1 ? '' : url.slice(at + 1),
        headers: { ...(bytes === undefined ? {} : { 'content-type': contentType }), ...headers },
        body: bytes,
        scope: '',
        origin: 'http://127.0.0.1:4010',
        basePath: '/mock',
        request: ++requests,
      });
      const map: Record<string, string> = {};
      for (let i = 0; i < answer.headers.length; i += 2)
        map[answer.headers[i] as string] = answer.headers[i + 1] as string;
      return {
        status: answer.status,
        headers: map,
        body: answer.body,
        json: answer.body === '' ? undefined : JSON.parse(answer.body),
        label: answer.label,
        notes: answer.notes ?? [],
      };
    },
  };
}

/** The config of the `serve --workers` resources tests (workers.test.ts with a store, workers-no-store.test.ts without): Stripe's customers under /v1, one seeded, the key as a bearer token. */
export function workersConfig(key: string): string {
  return `apiKey: ${key}
server: { basePath: /v1 }
auth: { accept: [bearer] }
resources:
  customers:
    style: stripe
    path: /customers
    fields: { object: customer, email: null }
    seed:
      - { id: cus_seed }
`;
}
