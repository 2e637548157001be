// What the admin API answers, as the page reads it: journal entries, usage and meters, the
// project, endpoints and their answers, resources, webhook deliveries and targets, and stubs.
// api.ts makes the calls and re-exports these types.

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
