import type { IncomingMessage } from 'node:http';
import type { AdminSession, RouteTable } from '../control/admin-api.js';
import { ControlError } from '../control/control-error.js';
import type { ResourceAdmin } from './admin.js';
import { MAX_RESOURCE_BODY, readResourceBody, readResourceFilter, RESOURCE_BODY_TOO_LARGE } from './admin-input.js';

/**
 * The admin routes of resources: `GET /__mockapi/resources` (each collection and its count),
 * `GET|PUT|DELETE|POST /__mockapi/resources/<name>` (its objects — `?history=true` with each
 * object's history, other parameters filter —; replace them with a JSON array; empty it; add one
 * object), and `GET /__mockapi/resources/<name>/<id>`. `?session=<id>` picks the session.
 */

async function readJson(req: IncomingMessage): Promise<unknown> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size <= MAX_RESOURCE_BODY) chunks.push(chunk);
    else chunks.length = 0;
  }
  if (size > MAX_RESOURCE_BODY) throw new ControlError(413, 'payload_too_large', RESOURCE_BODY_TOO_LARGE);
  return readResourceBody(Buffer.concat(chunks).toString('utf8'));
}

/**
 * The scope an admin call acts on: its session's id (`''` for the default session). A named session
 * is entered first (made if new, a 429 when there are `sessions.max`), so what is written for it is
 * dropped with it.
 */
export function scopeOf(session: AdminSession): string {
  if (session.id !== '') void session.plane;
  return session.id;
}

/** `<name>` or `<name>/<id>` of a `resources/*` route. */
function split(rest: string): { name: string; id?: string } {
  const slash = rest.indexOf('/');
  return slash === -1 ? { name: rest } : { name: rest.slice(0, slash), id: rest.slice(slash + 1) };
}

export function resourceRoutes(admin: ResourceAdmin): RouteTable {
  return {
    resources: {
      GET: async (_req, _res, _query, _rest, session) => ({ resources: await admin.summary(scopeOf(session)) }),
    },
    'resources/*': {
      GET: async (_req, _res, query, rest, session) => {
        const { name, id } = split(rest);
        const scope = scopeOf(session);
        if (id !== undefined) return admin.object(scope, name, id);
        return admin.contents(scope, name, readResourceFilter(query), query.get('history') === 'true');
      },
      POST: async (req, _res, _query, rest, session) => {
        const { name, id } = split(rest);
        if (id !== undefined)
          throw new ControlError(404, 'not_found', `No admin call POST /__mockapi/resources/${rest}`);
        // An admin write answers 200 with what it wrote (the admin API's rule), here the object added.
        return admin.add(scopeOf(session), name, await readJson(req));
      },
      PUT: async (req, _res, _query, rest, session) => {
        const { name, id } = split(rest);
        if (id !== undefined)
          throw new ControlError(404, 'not_found', `No admin call PUT /__mockapi/resources/${rest}`);
        return admin.replace(scopeOf(session), name, await readJson(req));
      },
      DELETE: async (_req, _res, _query, rest, session) => {
        const { name, id } = split(rest);
        if (id !== undefined)
          throw new ControlError(404, 'not_found', `No admin call DELETE /__mockapi/resources/${rest}`);
        return admin.clear(scopeOf(session), name);
      },
    },
  };
}
