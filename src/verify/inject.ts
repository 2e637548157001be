import type { IncomingMessage, ServerResponse } from 'node:http';
import { createRequire } from 'node:module';
import type { Target } from './targets.js';

/** The part of light-my-request used here. */
type Inject = (
  dispatch: (req: IncomingMessage, res: ServerResponse) => void,
  options: { method: string; url: string; headers: Record<string, string>; payload?: Buffer; remoteAddress: string },
) => Promise<{ statusCode: number; headers: Record<string, string | string[] | number | undefined>; rawPayload: Buffer }>;

/**
 * The mock of a verify run, asked without a socket: each example becomes a request object handed
 * to the server's own request handler (light-my-request's fake request and response, a real
 * node:http ServerResponse writing to no socket), so the answer comes from the same request steps
 * a client's does — auth, match, validation, dynamic answers, `errors:` — without the loopback
 * connection, the HTTP parser or the socket writes on either side. The example carries the
 * config's key in `X-API-Key`, under the base path; an answer must come within `timeoutMs`.
 */
export function injectTarget(handler: (req: IncomingMessage, res: ServerResponse) => void, basePath: string, apiKey: string, timeoutMs: number): Target {
  // CommonJS, loaded by verify alone.
  const inject = createRequire(import.meta.url)('light-my-request') as Inject;
  // The whole example was sent before the handler runs (its body is in memory): the message is
  // complete, as node:http says of a request whose body arrived (light-my-request does not set it).
  const dispatch = (req: IncomingMessage, res: ServerResponse): void => {
    req.complete = true;
    handler(req, res);
  };
  return {
    async send(request) {
      let timer: NodeJS.Timeout | undefined;
      try {
        const late = new Promise<never>((_, fail) => (timer = setTimeout(() => fail(new Error(`no answer within ${timeoutMs} ms`)), timeoutMs)));
        const options = { method: request.method, url: basePath + request.path + request.query, headers: { ...request.headers, 'x-api-key': apiKey }, remoteAddress: '127.0.0.1' };
        const answer = await Promise.race([inject(dispatch, request.body === undefined ? options : { ...options, payload: request.body }), late]);
        const headers: Array<[string, string]> = [];
        for (const [name, value] of Object.entries(answer.headers)) {
          if (value === undefined) continue;
          for (const v of Array.isArray(value) ? value : [value]) headers.push([name.toLowerCase(), String(v)]);
        }
        // node:http sends no body with a HEAD answer; light-my-request keeps what was written.
        return { ok: true, reply: { status: answer.statusCode, headers, body: request.method === 'HEAD' ? Buffer.alloc(0) : answer.rawPayload } };
      } catch (err) {
        return { ok: false, reason: `the mock did not answer: ${(err as Error).message}` };
      } finally {
        clearTimeout(timer);
      }
    },
    close: async () => {},
  };
}
