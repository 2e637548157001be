import type { Config, EndpointConfig } from '../config/types.js';
import type { VerifyExample } from '../config/types-verify.js';
import { examplePath } from './request.js';

/** One example to verify, with the endpoint it belongs to. */
export interface VerifyItem {
  endpoint: EndpointConfig;
  example: VerifyExample;
  /** `GET /users/:id`, or `GET /users/:id (gone)` / `(#2)` for one of several examples. */
  label: string;
  /** Sent only with --allow-unsafe: why it is not sent, otherwise undefined. */
  unsafe?: string;
}

/** What a run takes: the examples, and how many endpoints have none. */
export interface Selection {
  items: VerifyItem[];
  /** Endpoints without any example (`verify:` absent), left out. */
  without: number;
  /** Endpoints with `verify: false`. */
  off: number;
  /** Examples outside `--only`. */
  outside: number;
}

const SAFE = new Set(['GET', 'HEAD']);

/** An `--only` route (`GET /v1/*`, or a path alone for any method), `*` for anything, as a RegExp over `METHOD /path`. */
function onlyPattern(pattern: string): RegExp {
  const [first, ...rest] = pattern.trim().split(/\s+/);
  const escape = (s: string) => s.replace(/[.+?^${}()|[\]\\]/g, '\\$&').replace(/\*/g, '.*');
  if (rest.length === 0) return new RegExp(`^[A-Z]+ ${escape(first ?? '*')}$`);
  return new RegExp(`^${escape((first ?? '*').toUpperCase())} ${escape(rest.join(' '))}$`);
}

/**
 * The examples of a config to verify, in the config's order: `--only` keeps those whose route
 * (`GET /users/:id`) or example path (`GET /users/42`) matches one of its patterns; methods other
 * than GET and HEAD are marked unsafe unless `allowUnsafe`.
 */
export function selectExamples(config: Config, only: readonly string[], allowUnsafe: boolean): Selection {
  const patterns = only.map(onlyPattern);
  const selection: Selection = { items: [], without: 0, off: 0, outside: 0 };
  for (const endpoint of config.endpoints) {
    if (endpoint.verify === undefined) {
      selection.without++;
      continue;
    }
    if (endpoint.verify.length === 0) selection.off++;
    const route = `${endpoint.method} ${endpoint.path}`;
    endpoint.verify.forEach((example, i) => {
      const wanted =
        patterns.length === 0 ||
        patterns.some((re) => re.test(route) || re.test(`${endpoint.method} ${examplePath(endpoint.path, example)}`));
      if (!wanted) {
        selection.outside++;
        return;
      }
      const several = (endpoint.verify as VerifyExample[]).length > 1;
      const label =
        example.name !== undefined ? `${route} (${example.name})` : several ? `${route} (#${i + 1})` : route;
      const item: VerifyItem = { endpoint, example, label };
      if (!allowUnsafe && !SAFE.has(endpoint.method))
        item.unsafe = `${endpoint.method} is not sent without --allow-unsafe (it may change data on the real API)`;
      selection.items.push(item);
    });
  }
  return selection;
}
