import type { IncomingHttpHeaders } from 'node:http';
import type { CompiledEndpoint } from '../answer/compile.js';
import type { Exchange } from '../http/exchange.js';
import type { Reply } from '../http/reply.js';
import type { Step } from '../http/steps.js';
import type { ResourceAnswer } from './answers.js';
import type { ResourceMatch } from './engine.js';
import type { Resources } from './index.js';
import type { ResourceRequest } from './operations.js';
import { ResourceStoreError } from './redis-connection.js';

export interface ResourceStepParts {
  reply: Reply;
  /** None: no step. */
  resources?: Resources;
}

/** The request's scope: its session's id (`''` for the default session). */
export function scopeOfRequest(x: Exchange): string {
  return x.scope.id;
}

/** `http://host:port` as the client reached the server, for `Location` and `Link`. */
function originOf(x: Exchange): string {
  const secure = (x.req.socket as { encrypted?: boolean }).encrypted === true;
  return `${secure ? 'https' : 'http'}://${x.req.headers.host ?? '127.0.0.1'}`;
}

/**
 * The work of the resource step for a request, until it is answered: a client that goes away
 * meanwhile does not make its idempotency key free before the object is written (the retry would
 * write a second one); the key then keeps what the answer would have been.
 */
export const resourceWork = new WeakMap<Exchange, Promise<unknown>>();

/** A request as a resource reads it; its origin made only when read (a `Location`, a `Link`: most answers have none). */
class StepRequest implements ResourceRequest {
  readonly method: string;
  readonly path: string;
  readonly query: string;
  readonly headers: IncomingHttpHeaders;
  readonly body: Buffer | undefined;
  readonly scope: string;
  readonly basePath: string;
  #origin: string | undefined = undefined;

  constructor(private readonly x: Exchange) {
    const url = x.req.url ?? '/';
    const at = url.indexOf('?');
    this.method = x.method;
    this.path = x.mockPath;
    this.query = at === -1 ? '' : url.slice(at + 1);
    this.headers = x.req.headers;
    this.body = x.wholeBody;
    this.scope = scopeOfRequest(x);
    this.basePath = x.compiled.basePath;
  }

  get origin(): string {
    return (this.#origin ??= originOf(this.x));
  }
}

function requestOf(x: Exchange): ResourceRequest {
  return new StepRequest(x);
}

/**
 * The journal's endpoint of a resource's operation (`GET /v1/customers/:id`): the journal and the
 * endpoint counts read only its key; no later step runs for the request (the resource answered).
 */
const routes = new Map<string, CompiledEndpoint>();
function routeEndpoint(route: string): CompiledEndpoint {
  let endpoint = routes.get(route);
  if (endpoint === undefined) {
    if (routes.size > 10_000) routes.clear();
    routes.set(route, (endpoint = { key: route } as unknown as CompiledEndpoint));
  }
  return endpoint;
}

/** A store that cannot answer is the 503 of a store down (`errors.storeUnavailable`); anything else is a bug's 500. */
export function storeDown(reply: Reply, x: Exchange, err: unknown): void {
  if (x.res.destroyed) return;
  if (err instanceof ResourceStoreError) return reply.refuse(x, 'storeUnavailable', err.message);
  reply.failed(x, err);
}

/**
 * The "resources" step, after match: a request no endpoint (nor stub) answers, on the path of a
 * collection of `resources:`, gets the collection's answer — created, read, listed, changed or
 * deleted in the store, in the style's shape, with the limit and CORS headers of any answer. An
 * endpoint of `endpoints:` with the same method and path answers instead (it matched first).
 */
export function resourceStep(p: ResourceStepParts): Step | undefined {
  const { reply, resources } = p;
  if (resources === undefined) return undefined;
  const { engine } = resources;

  function answered(x: Exchange, match: ResourceMatch, answer: ResourceAnswer, scope: string): void {
    if (x.res.destroyed) {
      x.onAnswer?.({
        step: 'response',
        status: answer.status,
        headers: answer.headers,
        body: answer.body,
        streamed: false,
      });
      return;
    }
    x.endpoint = routeEndpoint(match.route);
    x.answer = answer.label;
    if (answer.invalid === true) x.invalidRequest = true;
    if (answer.notes !== undefined) (x.notes ??= []).push(...answer.notes);
    // A missing object as the config's `errors.notFound` reshapes it (unless the collection has its own).
    if (
      answer.missing !== true ||
      x.compiled.errors === undefined ||
      !reply.own(x, 'response', 'notFound', answer.status, answer.body, undefined)
    ) {
      // (the answer's list was made for this request: the limit and CORS headers are added to it in place)
      reply.send(x, 'response', answer.status, reply.answerHeaders(x, answer, false), answer.body);
    }
    const { writes } = answer;
    if (writes === undefined || x.journalId === undefined) return;
    const tagged = engine.tag(scope, match, writes, x.journalId);
    if (tagged instanceof Promise) tagged.catch(() => undefined);
  }

  return {
    name: 'resources',
    run(x, next) {
      if (x.endpoint !== undefined) return next(x);
      const match = engine.match(x.method, x.mockPath);
      if (match === undefined) return next(x);
      const req = requestOf(x);
      const handled = engine.handle(match, req);
      if (!(handled instanceof Promise)) return answered(x, match, handled, req.scope);
      const work = handled.then(
        (answer) => answered(x, match, answer, req.scope),
        (err: unknown) => storeDown(reply, x, err),
      );
      if (x.onAnswer !== undefined) resourceWork.set(x, work);
    },
    wantsWholeBody: (x, target) =>
      target === undefined && engine.match(x.method, x.mockPath)?.readsBody === true ? 'whole' : 'journal',
  };
}
