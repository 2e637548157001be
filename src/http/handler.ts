import type { IncomingMessage, ServerResponse } from 'node:http';
import type { ConfigHolder } from '../answer/config-runtime.js';
import { corsHeaders, isPreflight, preflightHeaders } from '../answer/cors.js';
import { mockPathOf, servedUnderNote } from './base-path.js';
import type { Exchange } from './exchange.js';
import type { Reply } from './reply.js';
import type { RequestLogger } from './request-log.js';
import type { RequestScope } from './scope.js';
import { plainRequestPath, readRequestPath } from './request-path.js';
import { serverHeadersFront, type ServerHeaderSources } from './server-headers-front.js';
import { chain, type Step } from './steps.js';

export type { Exchange, ServerHeaderSources };
export { PROBE_HEADER } from './reply.js';

export interface HandlerDeps {
  holder: ConfigHolder;
  /** How every answer is written, journaled and logged. */
  reply: Reply;
  /** The request log and the journal: a request's arrival time is read only when either is on. */
  requestLog: Pick<RequestLogger, 'enabled'>;
  journal: { readonly enabled: boolean };
  /**
   * The admin API: every path under `/__mockapi/` but health; `session` as the scoping step found it
   * named; `unreadable`: why the path could not be read (the admin API's checks come first, then its 400).
   */
  admin?: (
    req: IncomingMessage,
    res: ServerResponse,
    path: string,
    session: string | undefined,
    unreadable?: string,
  ) => void;
  /** The steps of a mock request, in order (src/request-steps.ts); composed once, here. */
  steps: readonly Step[];
  /** The default session's parts (`x.scope` of a request no session step scopes). */
  scope: RequestScope;
  /** What `server.headers` expressions read beside the request; without it they read seed 0 and no state. */
  serverHeaders?: ServerHeaderSources;
}

const HEALTH_PATH = '/__mockapi/health';
const ADMIN_PREFIX = '/__mockapi/';
const NO_HEADERS: readonly string[] = [];

/**
 * Whether a raw request path names the admin API (health included): `/__mockapi` and under it, also
 * after a session's `/__session/<id>` prefix.
 */
const isAdminPath = (path: string): boolean =>
  path.startsWith(ADMIN_PREFIX) || path === '/__mockapi' || /^\/__session\/[^/]*\/__mockapi(\/|$)/.test(path);
const EMPTY_BODY = '';

/**
 * Builds the request handler. It keeps the front of the request path — the path, mockapi's own
 * paths (health, the admin API), CORS preflight — then hands a mock request to its steps
 * (src/request-steps.ts), composed once. A bug in any of them becomes a JSON 500 and a log line.
 */
export function createRequestHandler(deps: HandlerDeps): (req: IncomingMessage, res: ServerResponse) => void {
  const { holder, reply, requestLog, journal, scope } = deps;
  const runSteps = chain(deps.steps, (x) => reply.failed(x, new Error(`no step answered ${x.method} ${x.path}`)));
  // What scoping steps do at the front (sessions): none, one, in the order of the list.
  const entries = deps.steps.filter((step) => step.enter !== undefined).map((step) => step.enter!.bind(step));
  const enter = entries.length === 0 ? undefined : (x: Exchange): boolean => entries.every((e) => e(x));

  const addServerHeaders = serverHeadersFront(deps.serverHeaders);

  function route(x: Exchange): void {
    const mockPath = mockPathOf(x.compiled, x.path);
    if (mockPath === undefined) {
      if (x.path === HEALTH_PATH && (x.method === 'GET' || x.method === 'HEAD')) {
        return reply.json(x, null, 200, x.compiled.health); // an admin call: not journaled
      }
      if (deps.admin !== undefined && x.path.startsWith(ADMIN_PREFIX) && x.path !== HEALTH_PATH)
        return deps.admin(x.req, x.res, x.path, x.session);
      addServerHeaders(x);
      return reply.refuse(x, 'notFound', servedUnderNote(x.compiled, x.method, x.path));
    }
    x.mockPath = mockPath;
    const own = addServerHeaders(x);
    if (x.compiled.config.server.cors && isPreflight(x.req)) {
      const headers = preflightHeaders(x.req, x.compiled.limitStyle?.expose);
      return reply.send(x, 'preflight', 204, own.length === 0 ? headers : headers.concat(own), EMPTY_BODY);
    }
    runSteps(x);
  }

  return function handleRequest(req, res) {
    const compiled = holder.current;
    const url = req.url ?? '/';
    const x: Exchange = {
      req,
      res,
      started: requestLog.enabled || journal.enabled ? performance.now() : 0,
      method: req.method ?? 'GET',
      path: url,
      mockPath: url,
      compiled,
      scope,
      extra: compiled.config.server.cors ? corsHeaders(req, compiled.limitStyle) : NO_HEADERS,
      answer: null,
      body: undefined,
      step: 'response',
      endpoint: undefined,
      verdict: undefined,
      journalBody: undefined,
      bodyTruncated: false,
      answerHeaders: NO_HEADERS,
      answerBody: undefined,
      keyVerdict: undefined,
      client: undefined,
      session: undefined,
      onAnswer: undefined,
      afterAnswer: undefined,
      journalId: undefined,
      invalidRequest: undefined,
    };
    try {
      let error: string | undefined;
      const plain = plainRequestPath(url);
      if (plain !== undefined) x.path = plain;
      else ({ path: x.path, error } = readRequestPath(url));
      x.mockPath = x.path; // the whole path until the base path is taken off (a refusal outside it names it)
      if (error === undefined && req.headers.host === undefined && req.httpVersion === '1.1')
        error = 'HTTP/1.1 request without a Host header';
      if (error !== undefined) {
        // Every path under /__mockapi/ is the admin API's, readable or not: its Host and token
        // checks, then its own 400, without CORS headers and not journaled.
        if (deps.admin !== undefined && isAdminPath(x.path)) return deps.admin(req, res, x.path, undefined, error);
        addServerHeaders(x);
        return reply.refuse(x, 'badRequest', undefined, error);
      }
      if (enter !== undefined && !enter(x)) return;
      route(x);
    } catch (err) {
      reply.failed(x, err);
    }
  };
}
