import type { ConfigHolder } from '../answer/config-runtime.js';
import { AdminAnswer, type RouteTable } from '../control/admin-api.js';
import { readJsonBody } from '../control/admin-input.js';
import type { StubOperations } from './operations.js';
import { StubInvalidError } from './stub-error.js';

/**
 * The admin routes of run-time stubs and test helpers:
 * `POST/GET/DELETE /__mockapi/stubs`, `DELETE /__mockapi/stubs/<id>`, `POST /__mockapi/usage`.
 * A stub's body may be as large as a mock request's (`server.maxBodySize`).
 */
export function stubRoutes(ops: StubOperations, holder: ConfigHolder): RouteTable {
  return {
    stubs: {
      GET: async () => ({ stubs: await ops.list() }),
      POST: async (req) => {
        const limit = holder.current.config.server.maxBodySize;
        const body = await readJsonBody(req, limit, `a stub is at most ${limit} bytes (server.maxBodySize)`);
        try {
          return new AdminAnswer(201, await ops.add(body));
        } catch (err) {
          if (err instanceof StubInvalidError) return new AdminAnswer(400, { error: 'invalid_stub', issues: err.issues });
          throw err;
        }
      },
      DELETE: async () => {
        await ops.clear();
        return { stubs: [] };
      },
    },
    'stubs/*': { DELETE: async (_req, _res, _query, id) => ({ stubs: await ops.remove(id) }) },
    usage: { POST: async (req) => ops.setUsage(await readJsonBody(req)) },
  };
}
