import { compareAnswers, mediaTypeOf, type Change } from './compare.js';
import { compileIgnore, type IgnoreList } from './ignore.js';
import { exampleRequest, type ExampleRequest } from './request.js';
import type { VerifyItem } from './select.js';
import { headerOf, type Reply, type Target } from './targets.js';

/** How one example came out. */
export type Verdict = 'same' | 'drift' | 'failed' | 'skipped';

/** One example's outcome, as the report shows it (and, for `--update`, what the real API answered). */
export interface VerifyResult {
  item: VerifyItem;
  verdict: Verdict;
  /** The request path and query sent (`/users/42?expand=owner`). */
  sent: string;
  changes: Change[];
  /** Why it failed or was skipped. */
  reason?: string;
  mockStatus?: number;
  upstreamStatus?: number;
  /** What was sent and what the real API answered (never reported: for `--update` only). */
  request?: ExampleRequest;
  reply?: Reply;
}

export interface RunOptions {
  upstream: Target;
  /** The mock; `prepare`, when it has one, is told every example to be sent, in order, before any is. */
  mock: Target & { prepare?(requests: readonly ExampleRequest[]): void };
  /** Examples in flight at once. */
  concurrency: number;
  /** The config's `verify.ignore`, added to each example's own. */
  ignore: readonly string[];
  secretName(name: string): boolean;
}

/** Upstream statuses that say the real API could not be checked (its key, its limits, its health), unless the example expects them. */
function refusal(status: number): string | undefined {
  if (status === 401 || status === 403) return `the upstream answered ${status}: check the credential of upstream.auth`;
  if (status === 407) return 'the upstream answered 407: the proxy wants a credential';
  if (status === 429) return 'the upstream answered 429 (rate limited): try a lower --concurrency';
  if (status >= 500) return `the upstream answered ${status}`;
  return undefined;
}

/** Sends one example to both, and compares what they answered. Never rejects. */
async function verifyOne(
  item: VerifyItem,
  request: ExampleRequest,
  options: RunOptions & { compiledIgnore: IgnoreList },
): Promise<VerifyResult> {
  const sent = request.path + request.query;
  if (item.unsafe !== undefined) return { item, verdict: 'skipped', sent, changes: [], reason: item.unsafe };
  const [up, mock] = await Promise.all([options.upstream.send(request), options.mock.send(request)]);
  if (!up.ok) return { item, verdict: 'failed', sent, changes: [], reason: up.reason };
  if (!mock.ok)
    return { item, verdict: 'failed', sent, changes: [], reason: mock.reason, upstreamStatus: up.reply.status };
  const statuses = { mockStatus: mock.reply.status, upstreamStatus: up.reply.status };
  const refused = refusal(up.reply.status);
  if (refused !== undefined && up.reply.status !== mock.reply.status && up.reply.status !== item.example.expect) {
    return { item, verdict: 'failed', sent, changes: [], reason: refused, ...statuses };
  }
  const changes = compareAnswers(
    { status: mock.reply.status, mediaType: mediaTypeOf(headerOf(mock.reply, 'content-type')), body: mock.reply.body },
    { status: up.reply.status, mediaType: mediaTypeOf(headerOf(up.reply, 'content-type')), body: up.reply.body },
    {
      method: request.method,
      expect: item.example.expect,
      ignore:
        item.example.ignore.length === 0
          ? options.compiledIgnore
          : compileIgnore([...options.ignore, ...item.example.ignore]),
      secretName: options.secretName,
    },
  );
  return {
    item,
    verdict: changes.length === 0 ? 'same' : 'drift',
    sent,
    changes,
    ...statuses,
    request,
    reply: up.reply,
  };
}

/**
 * Verifies every item, at most `concurrency` at a time (each sends its request to the real API and
 * to the mock at once); results in the items' order. Never rejects: an unexpected error is that
 * example's failure, in words.
 */
export async function verifyItems(items: readonly VerifyItem[], options: RunOptions): Promise<VerifyResult[]> {
  const results: VerifyResult[] = new Array(items.length);
  const requests = items.map((item) => exampleRequest(item.endpoint.method, item.endpoint.path, item.example));
  options.mock.prepare?.(requests.filter((_, i) => items[i]?.unsafe === undefined));
  // The config's own list, compiled once: what an example without a list of its own is compared with.
  const withIgnore = { ...options, compiledIgnore: compileIgnore(options.ignore) };
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < items.length) {
      const at = next++;
      const item = items[at] as VerifyItem;
      try {
        results[at] = await verifyOne(item, requests[at] as ExampleRequest, withIgnore);
      } catch (err) {
        results[at] = {
          item,
          verdict: 'failed',
          sent: '',
          changes: [],
          reason: `verify failed: ${(err as Error)?.message ?? String(err)}`,
        };
      }
    }
  };
  await Promise.all(Array.from({ length: Math.max(1, Math.min(options.concurrency, items.length)) }, worker));
  return results;
}
