/**
 * Which collection operation a request names: the collection whose path matches, the operation
 * its method asks for there, the route and the journal's label.
 */
import type { CompiledResource } from './compile.js';
import { requestSegments, type PathMatch } from './paths.js';

/** The operations a request can name. */
export type Operation = 'create' | 'list' | 'retrieve' | 'update' | 'replace' | 'delete' | 'action';

/** A request a collection answers: which, where, and what operation. */
export interface ResourceMatch {
  readonly resource: CompiledResource;
  readonly path: PathMatch;
  readonly operation: Operation;
  /** `GET /v1/customers/:id`: the journal's endpoint and the events' delivery log. */
  readonly route: string;
  /** Whether the operation reads the request's body. */
  readonly readsBody: boolean;
  /** The journal's label: `customers.retrieve`, `payment_intents.confirm`. */
  readonly label: string;
}

/** The first collection of `compiled` whose operation answers `method` on `path` (frozen: shared by every request on it). */
export function matchResource(
  compiled: readonly CompiledResource[],
  method: string,
  path: string,
): ResourceMatch | undefined {
  const segments = requestSegments(path);
  for (const resource of compiled) {
    const found = resource.matcher.match(segments);
    if (found === undefined) continue;
    const operation = operationOf(resource, found, method);
    if (operation === undefined) continue;
    // Shared by every request on this path: frozen, so no operation can change another's.
    Object.freeze(found.params);
    return Object.freeze({
      resource,
      path: Object.freeze(found),
      operation,
      route: routeOf(resource, found, method),
      readsBody: operation !== 'retrieve' && operation !== 'list' && operation !== 'delete',
      label: `${resource.name}.${operation === 'action' ? found.action : operation}`,
    });
  }
  return undefined;
}

function operationOf(resource: CompiledResource, found: PathMatch, method: string): Operation | undefined {
  if (found.kind === 'collection')
    return method === 'GET' || method === 'HEAD' ? 'list' : method === 'POST' ? 'create' : undefined;
  if (found.kind === 'action') return method === 'POST' ? 'action' : undefined;
  if (method === 'GET' || method === 'HEAD') return 'retrieve';
  if (method === 'DELETE') return 'delete';
  const how = resource.style.update(method);
  return how === 'merge' ? 'update' : how === 'replace' ? 'replace' : undefined;
}

function routeOf(resource: CompiledResource, found: PathMatch, method: string): string {
  const path = resource.config.path.replace(/\/$/, '');
  if (found.kind === 'collection') return `${method} ${path}`;
  if (found.kind === 'item') return `${method} ${path}/:id`;
  return `${method} ${path}/:id/${found.action}`;
}
