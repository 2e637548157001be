import type { CompiledConfig } from '../answer/compile.js';
import type { Clock } from '../clock.js';
import { clientOf, retryAfterOf, type ClientTracker } from './early-retries.js';
import type { Exchange } from '../http/exchange.js';
import type { RetryAfterWatch } from '../http/reply.js';
import { findCredential } from '../pipeline/auth-accept.js';

/** Where the request's key came from: `x-api-key`, `bearer`, `basic`, or a place of `auth.accept` (`query:api_key`). */
/** The client of a request that passed auth (see {@link clientOf}): the place of its credential, its key's short digest, its address. */
export function requestClient(x: Exchange): string {
  return clientOf(credentialPlace(x), x.named?.short ?? x.compiled.key.short, x.req.socket.remoteAddress);
}

function credentialPlace(x: Exchange): string {
  const { headers } = x.req;
  const accept = x.compiled.accept;
  if (accept === undefined) {
    const apiKey = headers['x-api-key'];
    return typeof apiKey === 'string' && apiKey.trim() !== ''
      ? 'x-api-key'
      : /^\s*basic\s/i.test(headers.authorization ?? '')
        ? 'basic'
        : 'bearer';
  }
  const source = findCredential(accept, { headers, url: x.req.url ?? '/', rawHeaders: x.req.rawHeaders })?.source;
  if (source === undefined) return 'unknown';
  return 'name' in source ? `${source.kind}:${source.name}` : source.kind;
}

/**
 * Watches the Retry-After a server gives and notes clients that come back before it. It costs one
 * size check per request while no Retry-After was given: the headers are looked at only for a 429,
 * an answer configured with one, or a client already remembered.
 */
export function createRetryAfterWatch(clients: ClientTracker, clock: Clock): RetryAfterWatch {
  /** Whether some configured answer has a Retry-After header; worked out once per config served. */
  let checkedConfig: CompiledConfig | undefined;
  let configuredRetryAfter = false;
  function mayGiveRetryAfter(compiled: CompiledConfig): boolean {
    if (compiled !== checkedConfig) {
      checkedConfig = compiled;
      configuredRetryAfter = /"retry-after"/i.test(JSON.stringify(compiled.config.endpoints));
    }
    return configuredRetryAfter;
  }
  // The key sent: a key of `keys:` (x.named), else apiKey; looked up only once a Retry-After was given.
  const identify = requestClient;
  /** A fault that sends nothing gives no Retry-After. */
  const reachesClient = (x: Exchange): boolean => {
    const kind = x.fault?.kind;
    return kind === undefined || kind === 'slow' || kind === 'truncate';
  };

  return {
    arrive(x) {
      // '' = not looked up: no Retry-After was given to anyone yet.
      if (clients.remembered.size === 0) {
        x.client = '';
        return;
      }
      x.client = identify(x);
      const early = clients.arrive(x.client, clock());
      if (early !== undefined) (x.notes ??= []).push(early);
    },
    answered(x, status, headers) {
      if (
        x.client === undefined ||
        !(x.client !== '' || status === 429 || mayGiveRetryAfter(x.compiled)) ||
        !reachesClient(x)
      )
        return;
      const retryAfter = retryAfterOf(headers);
      if (retryAfter === undefined) return;
      if (x.client === '') x.client = identify(x);
      clients.gave(x.client, retryAfter, clock());
    },
  };
}
