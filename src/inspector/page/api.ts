// The admin API, as the page uses it. Same origin only: the page is served by the server
// it inspects, and every call goes to `/__mockapi/…` on that origin (no other network access).

/** A journal entry. */
export interface Entry {
  id: number;
  time: string;
  method: string;
  path: string;
  query: Record<string, string | string[]>;
  headers: Record<string, string>;
  body: string;
  bodyTruncated: boolean;
  endpoint: string | null;
  response: string | null;
  status: number;
  ms: number;
  step: string;
  /** `name`: the header, query parameter, scheme or cookie of `auth.accept`; `keyName`: the key of `keys:` (`default` for apiKey). */
  credential: { via: string; name?: string; key: string; keyName?: string };
  notes: string[];
  /** The request's violations of the OpenAPI description, when its endpoint validates requests. */
  violations?: Array<{ in: string; pointer: string; param: string | null; keyword: string; message: string }>;
  /** The answer written (absent from a server that does not journal it). */
  responseHeaders?: Record<string, string>;
  responseBody?: string;
  responseBodyTruncated?: boolean;
  /** A streamed answer: its events, how many were sent, how it ended and when. */
  stream?: { events: number; sent: number; ended: string; firstByteMs: number | null; ms: number };
}

/** One meter of `GET /__mockapi/usage`, in its unit. */
export interface MeterUsage {
  window: string;
  month?: string;
  limit: number;
  used: number;
  remaining: number;
  resetSeconds: number;
}

/** `GET /__mockapi/usage`. */
export interface Usage {
  month: string;
  requests: number;
  quota: number | null;
  remaining: number | null;
  rateLimit: { limit: number; remaining: number; resetSeconds: number } | null;
  /** Each meter (tokens, spend…) by name: its window (`1m`), `month` or `total`. */
  meters?: Record<string, MeterUsage>;
  /** Every key by name (never the key), when the config lists `keys:`; the fields above are `default`'s. */
  keys?: Record<string, Omit<Usage, 'keys'> & { plan: string | null }>;
}

/** `GET /__mockapi/project`: the project and its key, masked; the key itself only when asked for. */
export interface Project {
  project: string;
  maskedKey: string;
  key?: string;
  /** Where endpoints are served: `/mock`, `/v1`, or `/` for the root. */
  basePath?: string;
  /** The first place the server reads a key from. */
  credential?: { via: string; name?: string };
  /** Every place the server reads a key from, in order of precedence. */
  accept?: Array<{ via: string; name?: string }>;
  /** The states each scenario is known to take (its initial one first). */
  scenarioStates?: Record<string, string[]>;
}

/** An answer of an endpoint as the page shows it. */
export interface AnswerInfo {
  name: string;
  requests: number | undefined;
  status?: number | string;
  /** Its `when` conditions, outermost first; empty for a fallback. */
  when?: string[];
  weight?: number;
  times?: number;
}

/** An endpoint as the page shows it. */
export interface EndpointInfo {
  method: string;
  path: string;
  requests: number | undefined;
  /** `failRate` (0 to 1) when the server says it and it is above 0. */
  failRate?: number;
  answers: AnswerInfo[];
}

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

/** A collection of `resources:` (`GET /__mockapi/resources`). */
export interface CollectionInfo {
  name: string;
  style: string;
  path: string;
  count: number;
}

/** One entry of an object's history: what happened to it, when (server clock) and by which request. */
export interface HistoryEntry {
  at: number;
  kind: string;
  detail?: string;
  request?: number;
}

/** A collection's objects with each one's history (`GET /__mockapi/resources/<name>?history=true`). */
export interface CollectionContents extends CollectionInfo {
  objects: Array<Record<string, unknown>>;
  history?: Record<string, HistoryEntry[]>;
}

/** A webhook delivery (`GET /__mockapi/webhooks/deliveries`, the `webhook` event): secrets never appear in it. */
export interface Delivery {
  id: string;
  event: string;
  eventId: string;
  target: string;
  url: string;
  endpoint: string | null;
  status: 'pending' | 'delivered' | 'failed';
  attempts: Array<{ time: string; status: number | null; ms: number; error: string | null }>;
  nextAttempt: string | null;
  headers: Record<string, string>;
  body: string;
  chaos: string[];
  error: string | null;
}

/** A webhook target (`GET /__mockapi/webhooks`): its secret as a fingerprint only. */
export interface WebhookTarget {
  name: string;
  url: string;
  scheme: string;
  secret: string;
  disabled: boolean;
  pending: number;
  delivered: number;
  failed: number;
}

/** A run-time stub as the page shows it (`GET /__mockapi/stubs`). */
export interface StubView {
  id: string;
  name: string | null;
  method: string;
  path: string;
  /** How many answers it was added for; null when it answers until removed. */
  times: number | null;
  remaining: number | null;
  hits: number;
}

/** Reads the `stubs` of `GET /__mockapi/stubs`; `endpoint` is the endpoint as sent (or `"GET /path"`). */
export function readStubs(data: unknown): StubView[] {
  if (!Array.isArray(data)) return [];
  return data.map((item): StubView => {
    const s = (item ?? {}) as Record<string, unknown>;
    const e = s.endpoint;
    let method = '';
    let path = '';
    if (typeof e === 'string') [method = '', path = ''] = e.split(' ');
    else if (e !== null && typeof e === 'object') {
      const ep = e as Record<string, unknown>;
      method = typeof ep.method === 'string' ? ep.method.toUpperCase() : '';
      path = typeof ep.path === 'string' ? ep.path : '';
    }
    const num = (v: unknown): number | null => (typeof v === 'number' ? v : null);
    return {
      id: String(s.id ?? ''),
      name: typeof s.name === 'string' ? s.name : null,
      method,
      path,
      times: num(s.times),
      remaining: num(s.remaining),
      hits: num(s.hits) ?? 0,
    };
  });
}

/**
 * Reads `GET /__mockapi/endpoints` leniently: the contract names what it holds (each endpoint, each
 * answer's name, how many requests each got), not its exact field names.
 */
export function readEndpoints(data: unknown): EndpointInfo[] {
  const list = Array.isArray(data)
    ? data
    : Array.isArray((data as { endpoints?: unknown })?.endpoints)
      ? (data as { endpoints: unknown[] }).endpoints
      : [];
  return list.map((item): EndpointInfo => {
    const e = (item ?? {}) as Record<string, unknown>;
    let method = typeof e.method === 'string' ? e.method : '';
    let path = typeof e.path === 'string' ? e.path : '';
    if ((method === '' || path === '') && typeof e.endpoint === 'string')
      [method = '', path = ''] = e.endpoint.split(' ');
    // `answerDetails` (status, when, weight, hits of each answer) where the server gives them.
    const answers = Array.isArray(e.answerDetails) ? e.answerDetails : Array.isArray(e.answers) ? e.answers : [];
    return {
      method,
      path,
      requests: countOf(e),
      ...(typeof e.failRate === 'number' && e.failRate > 0 ? { failRate: e.failRate } : {}),
      answers: answers.map((a): AnswerInfo =>
        typeof a === 'string' ? { name: a, requests: undefined } : answerOf(a as Record<string, unknown>),
      ),
    };
  });
}

function answerOf(a: Record<string, unknown>): AnswerInfo {
  const info: AnswerInfo = { name: String(a.name ?? a.answer ?? ''), requests: countOf(a) };
  if (typeof a.status === 'number' || typeof a.status === 'string') info.status = a.status;
  if (Array.isArray(a.when)) info.when = a.when.map(String);
  if (typeof a.weight === 'number') info.weight = a.weight;
  if (typeof a.times === 'number') info.times = a.times;
  return info;
}

function countOf(x: Record<string, unknown>): number | undefined {
  const n = x.requests ?? x.count;
  return typeof n === 'number' ? n : undefined;
}
