import type { ServerEntry } from './registry.js';

/** One server's answer to "do you serve the new key yet?". */
export interface ConfirmResult {
  server: ServerEntry;
  confirmed: boolean;
  /** Whether the server ever answered with a revision (an older one, since it did not confirm). */
  sawRevision: boolean;
}

export interface ConfirmOptions {
  /** Shared deadline for all servers, in ms from now. */
  timeoutMs: number;
  /** Time between two health polls of one server. */
  pollIntervalMs: number;
  /** Returns the revision a server at `url` serves, or undefined when it does not answer. */
  fetchRevision: (url: string) => Promise<string | undefined>;
  /**
   * Whether a served revision carries the new key. It is asked again for a revision it refused,
   * because the file may have been saved again since (with the new key, or not).
   */
  carriesNewKey: (revision: string) => Promise<boolean>;
  /** Polled between rounds: true stops every wait early (the file lost the new key; the caller starts over). */
  isStale?: () => boolean;
}

/**
 * Polls every server concurrently until it serves a revision that carries the new key, or the
 * shared deadline passes (or `isStale()` turns true).
 *
 * Not "the revision of the bytes rotate-key wrote": an editor may save again right after the
 * rotation, and a server that already serves that newer save never reports our revision, yet it
 * refuses the old key all the same. The health answer stays free of anything derived from the key
 * (no key fingerprint: a hash of a short or hand-picked key can be brute-forced, and the health
 * answer is unauthenticated); instead `carriesNewKey` looks at bytes rotate-key can read itself.
 */
export async function confirmServers(servers: ServerEntry[], opts: ConfirmOptions): Promise<ConfirmResult[]> {
  const deadline = Date.now() + opts.timeoutMs;
  return Promise.all(
    servers.map(async (server) => {
      let sawRevision = false;
      for (;;) {
        const remaining = deadline - Date.now();
        if (remaining <= 0 || opts.isStale?.()) return { server, confirmed: false, sawRevision };
        const served = await withDeadline(
          opts.fetchRevision(server.url).catch(() => undefined),
          remaining,
        );
        if (served !== undefined) {
          sawRevision = true;
          if (await opts.carriesNewKey(served)) return { server, confirmed: true, sawRevision };
        }
        await sleep(Math.min(opts.pollIntervalMs, Math.max(0, deadline - Date.now())));
      }
    }),
  );
}

/** `GET <url>/__mockapi/health` → its `revision`, or undefined when the server does not answer. */
export async function fetchHealthRevision(url: string): Promise<string | undefined> {
  try {
    // The probe header keeps these polls out of the server's request log (http/handler.ts PROBE_HEADER).
    const res = await fetch(`${connectableUrl(url)}/__mockapi/health`, {
      headers: { 'x-mockapi-probe': 'rotate-key' },
      signal: AbortSignal.timeout(1000),
    });
    if (!res.ok) {
      await res.body?.cancel();
      return undefined;
    }
    const body = (await res.json()) as { revision?: unknown };
    return typeof body.revision === 'string' ? body.revision : undefined;
  } catch {
    return undefined;
  }
}

/** A server bound to every interface is reached on loopback; the registry holds the bound address. */
export function connectableUrl(url: string): string {
  const parsed = new URL(url);
  if (parsed.hostname === '0.0.0.0') parsed.hostname = '127.0.0.1';
  if (parsed.hostname === '[::]') parsed.hostname = '[::1]';
  return parsed.toString().replace(/\/+$/, '');
}

function withDeadline<T>(promise: Promise<T>, ms: number): Promise<T | undefined> {
  return new Promise((done) => {
    const timer = setTimeout(() => done(undefined), ms);
    promise.then(
      (value) => {
        clearTimeout(timer);
        done(value);
      },
      () => {
        clearTimeout(timer);
        done(undefined);
      },
    );
  });
}

function sleep(ms: number): Promise<void> {
  return new Promise((done) => setTimeout(done, ms));
}
