import type { SessionParts } from './session-parts.js';
import { checkAuth } from '../pipeline/auth.js';
import { checkAccepted } from '../pipeline/auth-accept.js';
import type { Exchange } from '../http/exchange.js';
import type { Reply } from '../http/reply.js';
import { plainRequestPath, readRequestPath } from '../http/request-path.js';
import type { Step } from '../http/steps.js';
import { baggageSession } from './baggage.js';
import { sessionIdProblem } from './ids.js';
import type { SessionRegistry } from './registry.js';

/** The header that names a request's session. */
export const SESSION_HEADER = 'x-mockapi-session';
/** The path prefix that names a request's session: `/__session/<id>/mock/users/1`. */
export const SESSION_PREFIX = '/__session/';
const ADMIN_PREFIX = '/__mockapi/';

export interface SessionStepParts {
  reply: Reply;
  /** None: no step (a unit test's server). */
  sessions?: SessionRegistry;
}

/**
 * The session a request names (`id`), and the request target without the `/__session/<id>` prefix
 * (`rest`, when it had one); `problem` when a name it gives is not an id, `bad` that name.
 */
interface Named {
  id: string | undefined;
  rest: string | undefined;
  problem?: string;
  bad?: string;
}

/**
 * The session step, first of the list. At the front (`enter`, admin calls included) it reads the
 * session a request names — the `X-Mockapi-Session` header, else a `mockapi.session` baggage entry,
 * else a `/__session/<id>/` path prefix, which is taken off the path either way — and gives a mock
 * request its session's parts (`x.scope`): its journal, clock, scenario states, limits and stubs.
 * An id that is not one is 400 (journal step `bad_request`, in the default session). A request that
 * names no session is in the default one, as when there were no sessions; with `sessions.byKey`,
 * one whose key was made for a session is in that session (`run`, before auth). When there are
 * `sessions.max` sessions already, a request naming a new one is answered in the default session,
 * with a note saying so.
 */
export function sessionStep(p: SessionStepParts): Step | undefined {
  const { reply } = p;
  if (p.sessions === undefined) return undefined;
  const sessions = p.sessions;

  function enterSession(x: Exchange, id: string): void {
    const entry = sessions.enter(id);
    if (entry === undefined) {
      (x.notes ??= []).push(
        `session ${id} not made: sessions.max (${sessions.settings().max}) sessions exist; answered in the default session`,
      );
      return;
    }
    entry.requests++;
    x.scope = sessions.partsOf(entry);
    // The default journal may keep nothing while this one has a listener: its entries still get their time.
    if (x.started === 0 && x.scope.journal.enabled) x.started = performance.now();
  }

  return {
    name: 'session',
    enter(x) {
      const named = namedSession(x);
      if (named.rest !== undefined && !takePrefix(x, named.rest)) return false;
      // An admin call acts on the session it names, made there if need be; the admin API refuses a
      // name that is not an id (400, in its own words, not journaled) or one too many (429).
      if (x.path.startsWith(ADMIN_PREFIX)) {
        x.session = named.bad ?? named.id;
        return true;
      }
      if (named.problem !== undefined) {
        reply.refuse(x, 'badRequest', undefined, named.problem);
        return false;
      }
      if (named.id === undefined) return true;
      if (sessions.unavailable !== undefined) {
        reply.refuse(x, 'badRequest', undefined, sessions.unavailable);
        return false;
      }
      x.session = named.id;
      enterSession(x, named.id);
      return true;
    },
    run(x, next) {
      // With `sessions.byKey`: a key made for a session puts a request that names none in it.
      if (x.session === undefined && sessions.keys !== undefined && sessions.unavailable === undefined) {
        const id = keySession(x, sessions);
        if (id !== undefined) enterSession(x, id);
      }
      // On a host of a fleet, a session's first request here waits until its shared parts are taken
      // (its limits' store, its clock, stubs and scenario states): it never answers from a part of them.
      // A named session's scope is its parts (enterSession); the default scope has no `ready`.
      const ready = (x.scope as Partial<Pick<SessionParts, 'ready'>>).ready;
      if (ready === undefined) next(x);
      else void ready.then(() => next(x)).catch((err: unknown) => reply.failed(x, err));
    },
  };

  /** Takes the `/__session/<id>` prefix off the request (its URL, path and mock path); false when it answered (a path that cannot be read). */
  function takePrefix(x: Exchange, rest: string): boolean {
    x.req.url = rest;
    const plain = plainRequestPath(rest);
    let error: string | undefined;
    if (plain !== undefined) x.path = plain;
    else ({ path: x.path, error } = readRequestPath(rest));
    x.mockPath = x.path;
    if (error === undefined) return true;
    reply.refuse(x, 'badRequest', undefined, error);
    return false;
  }
}

/** The session a request names, in order: the header, the baggage entry, the path prefix (taken off whenever present). */
function namedSession(x: Exchange): Named {
  const url = x.req.url ?? '/';
  let prefixed: string | undefined;
  let rest: string | undefined;
  if (url.startsWith(SESSION_PREFIX)) {
    let end = SESSION_PREFIX.length;
    for (
      let c = url.charCodeAt(end);
      end < url.length && c !== 47 /* / */ && c !== 63 /* ? */ && c !== 35 /* # */;
      c = url.charCodeAt(++end)
    );
    prefixed = url.slice(SESSION_PREFIX.length, end);
    rest = url.charCodeAt(end) === 47 ? url.slice(end) : `/${url.slice(end)}`;
    const problem = sessionIdProblem(prefixed);
    if (problem !== undefined)
      return {
        id: undefined,
        rest,
        problem: `the path prefix /__session/<id>/ names no session: ${problem}`,
        bad: prefixed,
      };
  }
  const header = x.req.headers[SESSION_HEADER];
  if (header !== undefined)
    return checked((Array.isArray(header) ? header.join(', ') : header).trim(), rest, 'X-Mockapi-Session');
  const fromBaggage = baggageSession(x.req.headers.baggage);
  if (fromBaggage !== undefined) return checked(fromBaggage, rest, 'the baggage entry mockapi.session');
  return { id: prefixed, rest };
}

function checked(id: string, rest: string | undefined, where: string): Named {
  const problem = sessionIdProblem(id);
  return problem === undefined
    ? { id, rest }
    : { id: undefined, rest, problem: `${where} names no session: ${problem}`, bad: id };
}

/** The session whose key the request carries, read where the config takes keys from (`auth.accept`). */
function keySession(x: Exchange, sessions: SessionRegistry): string | undefined {
  const keys = sessions.keys!;
  const { req, compiled } = x;
  const verdict =
    compiled.accept === undefined
      ? checkAuth(req.headers, keys, req.rawHeaders)
      : checkAccepted(compiled.accept, { headers: req.headers, url: req.url ?? '/', rawHeaders: req.rawHeaders }, keys);
  return typeof verdict === 'object' && sessions.get(verdict.name) !== undefined ? verdict.name : undefined;
}
