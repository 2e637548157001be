import type { ConfigHolder } from '../answer/config-runtime.js';
import { AdminAnswer, type AdminSession, type RouteTable } from '../control/admin-api.js';
import { readJsonBody } from '../control/admin-input.js';
import type { StubOperations } from './operations.js';
import { StubInvalidError, stubTooLarge } from './stub-error.js';

/**
 * The admin routes of run-time stubs and test helpers:
 * `POST/GET/DELETE /__mockapi/stubs`, `DELETE /__mockapi/stubs/<id>`, `POST /__mockapi/usage`.
 * A stub's body may be as large as a mock request's (`server.maxBodySize`). Each call acts on the
 * stubs of the session it names (`opsOf`).
 */
export function stubRoutes(opsOf: (session: AdminSession) => StubOperations, holder: ConfigHolder): RouteTable {
  return {
    stubs: {
      GET: async (_req, _res, _query, _rest, session) => ({ stubs: await opsOf(session).list() }),
      POST: async (req, _res, _query, _rest, session) => {
        const ops = opsOf(session);
        const limit = holder.current.config.server.maxBodySize;
        const body = await readJsonBody(req, limit, stubTooLarge(limit));
        try {
          return new AdminAnswer(201, await ops.add(body));
        } catch (err) {
          if (err instanceof StubInvalidError)
            return new AdminAnswer(400, { error: 'invalid_stub', issues: err.issues });
          throw err;
        }
      },
      DELETE: async (_req, _res, _query, _rest, session) => {
        await opsOf(session).clear();
        return { stubs: [] };
      },
    },
    'stubs/*': { DELETE: async (_req, _res, _query, id, session) => ({ stubs: await opsOf(session).remove(id) }) },
    usage: { POST: async (req, _res, _query, _rest, session) => opsOf(session).setUsage(await readJsonBody(req)) },
  };
}
