import type { Exchange } from '../http/exchange.js';
import type { FutileWatch } from '../http/steps/limits.js';
import { requestClient } from './retry-after-watch.js';

/** Most client and route pairs remembered; the one refused longest ago is forgotten first. */
export const MAX_FUTILE = 1000;

/**
 * Futile retries: a client that sends again a request refused because a budget is spent (a
 * `month` or `total` meter) — the client bug the real APIs punish with a stuck app, since waiting
 * does not bring the budget back. The first refusal of a client on a route is remembered; each
 * request it sends there while refused so is noted `futile retry (n)`. An admitted request there
 * (the budget was raised or reset) forgets it, and so do a reset of the session's usage and the
 * session's end (a session named again later starts afresh). A client is where its credential came from, a short
 * digest of the key it sent (never the key), its address, the name of its key and its session.
 */
export function createFutileWatch(max = MAX_FUTILE): FutileWatch {
  /** By client, key name, session and route: the session's id and how many retries came. */
  const refused = new Map<string, { readonly scope: string; retries: number }>();
  const identify = (x: Exchange, route: string): string =>
    `${requestClient(x)} ${x.named?.name ?? 'default'} ${x.scope.id} ${route}`;
  return {
    exhausted(x, route) {
      const id = identify(x, route);
      const before = refused.get(id);
      if (before === undefined) {
        if (refused.size >= max) refused.delete(refused.keys().next().value as string);
        refused.set(id, { scope: x.scope.id, retries: 0 });
        return undefined;
      }
      refused.delete(id); // re-inserted: the most recently refused is forgotten last
      before.retries++;
      refused.set(id, before);
      return `futile retry (${before.retries})`;
    },
    admitted(x, route) {
      if (refused.size > 0) refused.delete(identify(x, route));
    },
    forget(scope) {
      for (const [id, entry] of refused) if (entry.scope === scope) refused.delete(id);
    },
  };
}
