/**
 * Early retries: each Retry-After given is remembered per client, and a request from
 * that client before the moment it named is noted. A client is where its credential came from, a
 * short digest of the key it sent (never the key) and its address. Nothing is looked at until a first
 * Retry-After is given: the handler asks {@link ClientTracker.remembered}'s size first.
 */

import { MAX_GIVEN_RETRY_AFTER_MS, retryAfterMoment } from '../retry-after.js';

/** One client as `GET /__mockapi/clients` shows it. */
export interface ClientReport {
  client: string;
  /** Requests from this client since it was first given a Retry-After (that answer's request included). */
  requests: number;
  retryAfterGiven: number;
  earlyRetries: number;
  /** How early the earliest retry came, in milliseconds; 0 when none came early. */
  worstEarlyMs: number;
}

interface Remembered extends ClientReport {
  /** When the last Retry-After given allows the next request (ms since the epoch); 0 once passed. */
  until: number;
}

/**
 * A retry this close to the moment named is on time: a client's timer may fire a few milliseconds
 * early (libuv measures it from the loop's cached time), and Retry-After counts whole seconds.
 */
export const ON_TIME_MS = 50;

/** Most clients remembered; the one told longest ago is forgotten first. */
export const MAX_CLIENTS = 1000;

/** The Retry-After memory of one server. */
export interface ClientTracker {
  /** Clients given a Retry-After; empty until the first one (the handler checks its size first). */
  readonly remembered: ReadonlyMap<string, unknown>;
  /** A request from `client` arrives at `now`: the early-retry note, when it came early. */
  arrive(client: string, now: number): string | undefined;
  /** `client` was sent `Retry-After: value` at `now`. */
  gave(client: string, value: string, now: number): void;
  /**
   * Another worker of `serve --workers` sent `client` `Retry-After: value` at `now`: an early retry
   * is noticed here too, and nothing is counted (that worker counts the answer), so the workers'
   * lists add up (see {@link mergeClients}).
   */
  heard(client: string, value: string, now: number): void;
  list(): ClientReport[];
  /**
   * Forgets every client (`POST /__mockapi/reset` of `usage` or `rateLimit`): once the limits that
   * gave the Retry-Afters are reset, a client coming back is no longer early.
   */
  clear(): void;
  /** Lines for stderr when `serve` stops: the clients that retried early, worst first; undefined when none was given a Retry-After. */
  summary(): string | undefined;
}

/**
 * `Retry-After` as the moment it names: delay-seconds (at most {@link MAX_GIVEN_RETRY_AFTER_MS}:
 * an answer's header may come from a request or an upstream) or an HTTP-date (never past the year
 * 9999); undefined when it is neither.
 */
export function retryMoment(value: string, now: number): number | undefined {
  // A retry-after-ms (see retryAfterOf): milliseconds.
  if (/^\d+ms$/.test(value)) return now + Math.min(MAX_GIVEN_RETRY_AFTER_MS, Number(value.slice(0, -2)));
  return retryAfterMoment(value, now, MAX_GIVEN_RETRY_AFTER_MS);
}

/** Creates an empty tracker holding at most `max` clients. */
export function createClientTracker(max = MAX_CLIENTS): ClientTracker {
  const clients = new Map<string, Remembered>();
  /** Remembers when `client` may come back; a new client's count starts at `requests`. */
  function tell(client: string, value: string, now: number, requests: number): Remembered | undefined {
    const until = retryMoment(value, now);
    if (until === undefined) return undefined;
    let c = clients.get(client);
    if (c === undefined) {
      if (clients.size >= max) clients.delete(clients.keys().next().value as string);
      c = { client, requests, retryAfterGiven: 0, earlyRetries: 0, worstEarlyMs: 0, until: 0 };
    } else {
      clients.delete(client); // re-inserted below: the most recently told is forgotten last
    }
    clients.set(client, c);
    c.until = until;
    return c;
  }
  return {
    remembered: clients,
    arrive(client, now) {
      const c = clients.get(client);
      if (c === undefined) return undefined;
      c.requests++;
      if (c.until === 0) return undefined;
      if (now >= c.until - ON_TIME_MS) {
        c.until = 0;
        return undefined;
      }
      const early = Math.ceil(c.until - now);
      c.earlyRetries++;
      c.worstEarlyMs = Math.max(c.worstEarlyMs, early);
      return `early retry: ${early} ms before Retry-After`;
    },
    gave(client, value, now) {
      const c = tell(client, value, now, 1);
      if (c !== undefined) c.retryAfterGiven++;
    },
    heard(client, value, now) {
      tell(client, value, now, 0);
    },
    clear: () => clients.clear(),
    list: () =>
      [...clients.values()].map(({ client, requests, retryAfterGiven, earlyRetries, worstEarlyMs }) => ({
        client,
        requests,
        retryAfterGiven,
        earlyRetries,
        worstEarlyMs,
      })),
    summary() {
      return summarize([...clients.values()]);
    },
  };
}

/** The stop summary of these clients (see {@link ClientTracker.summary}). */
export function summarize(clients: readonly ClientReport[]): string | undefined {
  if (clients.length === 0) return undefined;
  const early = clients
    .filter((c) => c.earlyRetries > 0)
    .sort((a, b) => b.earlyRetries - a.earlyRetries || b.worstEarlyMs - a.worstEarlyMs);
  if (early.length === 0) return `Retry-After: every client waited as told (${clients.length} given one)`;
  const lines = early
    .slice(0, 5)
    .map(
      (c) =>
        `  ${c.client}: ${c.earlyRetries} early of ${c.retryAfterGiven} Retry-After given, worst ${c.worstEarlyMs} ms early (${c.requests} requests)`,
    );
  const more = early.length > 5 ? [`  …and ${early.length - 5} more`] : [];
  return [
    `early retries: ${early.length} of ${clients.length} clients came back before Retry-After`,
    ...lines,
    ...more,
  ].join('\n');
}

/**
 * The lists of every worker of `serve --workers` as one, per client: counts added up (a worker
 * counts only what it answered; see {@link ClientTracker.heard}), the worst retry the worst of all.
 * Ordered by client, so every worker answers the same list.
 */
export function mergeClients(lists: readonly (readonly ClientReport[])[]): ClientReport[] {
  const merged = new Map<string, ClientReport>();
  for (const list of lists) {
    for (const c of list) {
      const m = merged.get(c.client);
      if (m === undefined) merged.set(c.client, { ...c });
      else {
        m.requests += c.requests;
        m.retryAfterGiven += c.retryAfterGiven;
        m.earlyRetries += c.earlyRetries;
        m.worstEarlyMs = Math.max(m.worstEarlyMs, c.worstEarlyMs);
      }
    }
  }
  return [...merged.values()].sort((a, b) => (a.client < b.client ? -1 : a.client > b.client ? 1 : 0));
}

/**
 * The client of a request that passed auth: where its credential came from (`x-api-key`, `bearer`,
 * `basic`, or a place of `auth.accept`), the first 12 hex digits of the sha256 of the key it sent
 * (`keyShort`: the key the auth step matched, made once per config; never the key itself), and the
 * remote address. Two keys from one address are two clients, so a Retry-After given to one never
 * makes the other's requests early.
 */
export function clientOf(via: string, keyShort: string, address: string | undefined): string {
  return `${via}:${keyShort}@${address ?? 'unknown'}`;
}

/** The Retry-After value of a flat `[name, value, …]` header list, if it has one. */
export function retryAfterOf(headers: readonly string[]): string | undefined {
  let found: string | undefined;
  for (let i = 0; i < headers.length; i += 2) {
    const name = headers[i]!;
    if (name.length === 11 && name.toLowerCase() === 'retry-after') found ??= headers[i + 1];
    // `retry-after-ms` (OpenAI's headers) is the exact wait the SDKs honour first: it decides.
    else if (name.length === 14 && name.toLowerCase() === 'retry-after-ms' && /^\d+$/.test(headers[i + 1] ?? ''))
      return `${headers[i + 1]}ms`;
  }
  return found;
}
