// The admin API, as the page uses it. Same origin only: the page is served by the server
// it inspects, and every call goes to `/__mockapi/…` on that origin (no other network access).
// The shapes of its answers are in api-types.ts, the lenient readers of some in api-read.ts.
import type {
  CollectionContents,
  CollectionInfo,
  Delivery,
  Entry,
  Project,
  Usage,
  WebhookTarget,
} from './api-types.js';
import { readEndpoints, readStubs } from './api-read.js';

export type {
  AnswerInfo,
  CollectionContents,
  CollectionInfo,
  Delivery,
  EndpointInfo,
  Entry,
  HistoryEntry,
  MeterUsage,
  Project,
  StubView,
  Usage,
  WebhookTarget,
} from './api-types.js';

const BASE = '/__mockapi';

/**
 * The session the page inspects: `?session=<id>` of its own address, or the `/__session/<id>/`
 * prefix it was opened under; null for the default session. Every call and the event stream name it,
 * so the page shows that session's requests, usage, stubs and scenarios, and no other's.
 */
export const SESSION: string | null = (() => {
  const named = new URLSearchParams(location.search).get('session');
  if (named !== null && named !== '') return named;
  const prefixed = /^\/__session\/([^/]+)\//.exec(location.pathname);
  return prefixed === null ? null : decodeURIComponent(prefixed[1]!);
})();

/** An admin path (`/requests?since=1`) with the page's session added to its query. */
export function adminUrl(path: string): string {
  if (SESSION === null) return BASE + path;
  return `${BASE}${path}${path.includes('?') ? '&' : '?'}session=${encodeURIComponent(SESSION)}`;
}

/** Thrown for an admin answer other than 2xx; `body` is the JSON error when there is one. */
export class AdminError extends Error {
  constructor(
    readonly status: number,
    readonly body: unknown,
  ) {
    super(describeError(status, body));
  }
}

function describeError(status: number, body: unknown): string {
  if (body !== null && typeof body === 'object') {
    const { message, error } = body as { message?: unknown; error?: unknown };
    if (typeof message === 'string') return `${status}: ${message}`;
    if (typeof error === 'string') return `${status}: ${error}`;
  }
  return `the server answered ${status}`;
}

async function call<T>(method: string, path: string, body?: unknown): Promise<T> {
  const init: RequestInit = { method, headers: { accept: 'application/json' } };
  // Writes must say JSON: that is what keeps cross-site forms out.
  if (body !== undefined) init.headers = { accept: 'application/json', 'content-type': 'application/json' };
  if (body !== undefined) init.body = JSON.stringify(body);
  const res = await fetch(adminUrl(path), init);
  const text = await res.text();
  let data: unknown = undefined;
  try {
    data = text === '' ? undefined : JSON.parse(text);
  } catch {
    data = text;
  }
  if (!res.ok) throw new AdminError(res.status, data);
  return data as T;
}

/** The admin calls the page makes. */
export const api = {
  requests: (since: number, limit: number) =>
    call<{ requests: Entry[] }>('GET', `/requests?since=${since}&limit=${limit}`).then((r) => r.requests),
  clearRequests: () => call<unknown>('DELETE', '/requests', {}),
  usage: () => call<Usage>('GET', '/usage'),
  project: (reveal: boolean) => call<Project>('GET', reveal ? '/project?reveal=true' : '/project'),
  rotateKey: () => call<{ key: string }>('POST', '/rotate-key', {}),
  resetUsage: () =>
    call<unknown>('POST', '/reset', {
      usage: true,
      rateLimit: true,
      journal: false,
      sequences: false,
      scenarios: false,
      clock: false,
      stubs: false,
      resources: false,
    }),
  scenarios: () => call<Record<string, string>>('GET', '/scenarios'),
  setScenario: (name: string, state: string) =>
    call<Record<string, string>>('PUT', `/scenarios/${encodeURIComponent(name)}`, { state }),
  endpoints: () => call<unknown>('GET', '/endpoints').then(readEndpoints),
  stubs: () => call<{ stubs?: unknown }>('GET', '/stubs').then((r) => readStubs(r?.stubs)),
  removeStub: (id: string) => call<unknown>('DELETE', `/stubs/${encodeURIComponent(id)}`, {}),
  deliveries: (limit: number) =>
    call<{ deliveries: Delivery[] }>('GET', `/webhooks/deliveries?limit=${limit}`).then((r) => r.deliveries),
  webhookTargets: () => call<{ targets: WebhookTarget[] }>('GET', '/webhooks').then((r) => r.targets),
  replayDelivery: (id: string) => call<Delivery>('POST', `/webhooks/deliveries/${encodeURIComponent(id)}/replay`, {}),
  resources: () => call<{ resources: CollectionInfo[] }>('GET', '/resources').then((r) => r.resources),
  collection: (name: string) => call<CollectionContents>('GET', `/resources/${encodeURIComponent(name)}?history=true`),
};
