import type { ControlCalls } from './control/calls.js';
import { ControlError, WaitTimeoutError, unreachable } from './control/control-error.js';
import { clockSetValue, filterQuery as query, waitQuery } from './control/call-input.js';
import type { JournalEntry } from './control/journal-entry.js';
import { MAX_WAIT_MS, parseSpan } from './control/wait.js';
import { httpStubCalls, type StubCalls } from './stubs/calls.js';
import { StubInvalidError } from './stubs/stub-error.js';
import type { StubIssue } from './stubs/validate.js';
import { httpWebhookCalls, type WebhookCalls } from './webhooks/calls.js';
import { httpSessionCalls, type SessionCalls } from './sessions/calls.js';
import { httpResourceCalls, type ResourceCalls } from './resources/calls.js';
import type { CollectionInfo } from './resources/admin.js';

/** Options of {@link connectMockServer}. */
export interface ConnectOptions {
  /** Sent as `X-Mockapi-Admin-Token` (needed by a server bound beyond loopback). Default: `$MOCKAPI_ADMIN_TOKEN`. */
  adminToken?: string;
  /**
   * The session every call acts on (sent as `X-Mockapi-Session`); default: the session of a
   * `/__session/<id>` URL, else the default session.
   */
  session?: string;
}

/**
 * The control calls of the mock server at `url` (its base URL, as printed by `mockapi serve`),
 * over its admin API: the same answers as the object of `startMockServer` in that process.
 */
export function connectMockServer(
  url: string,
  options: ConnectOptions = {},
): ControlCalls &
  StubCalls & {
    webhooks: WebhookCalls;
    sessions: SessionCalls;
    resources: ResourceCalls;
    resourceCollections(): Promise<CollectionInfo[]>;
  } {
  const origin = url.replace(/\/+$/, '').replace(/\/mock$/, '');
  const base = `${origin}/__mockapi/`;
  const token = options.adminToken ?? process.env.MOCKAPI_ADMIN_TOKEN;

  async function call<T>(method: string, path: string, body?: unknown, timeoutMs = 10_000): Promise<T> {
    const headers: Record<string, string> = {};
    if (token !== undefined && token !== '') headers['x-mockapi-admin-token'] = token;
    if (options.session !== undefined) headers['x-mockapi-session'] = options.session;
    if (method !== 'GET') headers['content-type'] = 'application/json';
    let res: Response;
    try {
      res = await fetch(base + path, {
        method,
        headers,
        body: method === 'GET' ? undefined : JSON.stringify(body ?? {}),
        signal: AbortSignal.timeout(timeoutMs),
      });
    } catch (err) {
      // fetch's own "fetch failed" says neither where nor why: a refused or unreachable server.
      if (err instanceof TypeError) throw unreachable(origin);
      if ((err as Error).name === 'TimeoutError')
        throw new ControlError(
          0,
          'timeout',
          `${origin} did not answer ${method} /__mockapi/${path} within ${timeoutMs / 1000} s`,
        );
      throw err;
    }
    const answer = (await res.json().catch(() => ({}))) as Record<string, unknown>;
    if (res.status === 408 && Array.isArray(answer.deliveries)) return answer as T; // a webhook wait: its caller throws
    if (res.status === 408) throw new WaitTimeoutError(String(answer.message), answer.requests as JournalEntry[]);
    if (res.status === 400 && answer.error === 'invalid_stub' && Array.isArray(answer.issues))
      throw new StubInvalidError(answer.issues as StubIssue[]);
    if (!res.ok)
      throw new ControlError(
        res.status,
        String(answer.error ?? 'error'),
        String(answer.message ?? `admin API answered ${res.status}`),
      );
    return answer as T;
  }

  return {
    requests: async (filter) => (await call<{ requests: JournalEntry[] }>('GET', `requests${query(filter)}`)).requests,
    countRequests: async (filter) => (await call<{ count: number }>('GET', `requests/count${query(filter)}`)).count,
    async waitForRequests(filter, options = {}) {
      const params = query(filter, waitQuery(options));
      const wait = Math.min(parseSpan(options.timeout ?? 5000) ?? 5000, MAX_WAIT_MS);
      return (await call<{ requests: JournalEntry[] }>('GET', `requests/wait${params}`, undefined, wait + 10_000))
        .requests;
    },
    clearRequests: async () => {
      await call('DELETE', 'requests');
    },
    usage: () => call('GET', 'usage'),
    reset: (parts) => call('POST', 'reset', parts ?? {}),
    rotateKey: async (key, options = {}) =>
      (
        await call<{ key: string }>(
          'POST',
          'rotate-key',
          { ...(key === undefined ? {} : { key }), ...(options.name === undefined ? {} : { name: options.name }) },
          30_000,
        )
      ).key,
    scenarios: {
      get: () => call('GET', 'scenarios'),
      set: (name, state) => call('PUT', `scenarios/${encodeURIComponent(name)}`, { state }),
    },
    clock: {
      now: async () => (await call<{ now: string }>('GET', 'clock')).now,
      set: async (time) =>
        (
          await call<{ now: string }>('POST', 'clock', {
            set: clockSetValue(time),
          })
        ).now,
      advance: async (by) => (await call<{ now: string }>('POST', 'clock', { advance: by })).now,
    },
    endpoints: async () =>
      (await call<{ endpoints: Awaited<ReturnType<ControlCalls['endpoints']>> }>('GET', 'endpoints')).endpoints,
    ...httpStubCalls((method, path, body) => call(method, path, body)),
    webhooks: httpWebhookCalls(call),
    sessions: httpSessionCalls((method, path, body) => call(method, path, body)),
    ...httpResourceCalls(call),
  };
}
