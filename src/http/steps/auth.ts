import { checkAuth, createConnectionAuth, type AuthVerdict } from '../../pipeline/auth.js';
import { checkAccepted, DEFAULT_ACCEPT, findCredential, misplacedKey } from '../../pipeline/auth-accept.js';
import type { Exchange } from '../exchange.js';
import type { Reply } from '../reply.js';
import type { Step } from '../steps.js';

export interface AuthStepParts {
  reply: Reply;
  /** The sessions, told of a request let in with a session's key (it is then scrubbed from logs and the journal). */
  sessions?: { sawKey(key: string): void };
}

/**
 * The auth step: a request without a key, or with one no key of the config matches, gets the 401
 * (journal step `auth`). A key of `keys:` is kept in `x.named` (the limits step counts per key;
 * `errors:` templates read `key.name`). Then early retries are noted (after auth: a client is its
 * credential). A key made for the request's session (`sessions.byKey`) is accepted as `apiKey`
 * there, and nowhere else.
 */
export function authStep(p: AuthStepParts): Step {
  const { reply } = p;
  // Remembers each connection's last credential and verdict (see createConnectionAuth).
  const checkConnection = createConnectionAuth();
  /**
   * 401 "No API key provided". A key sent where the config reads none (`Authorization: token …`
   * without `{ scheme: token }`) is named in the note of the log line, the journal and the trace,
   * and offered to `errors:` templates as `error.hint`; the body stays the fixed one.
   */
  function refuseMissing(x: Exchange): void {
    const hint = misplacedKey(x.compiled.accept, {
      headers: x.req.headers,
      url: x.req.url ?? '/',
      rawHeaders: x.req.rawHeaders,
    });
    if (hint === undefined) return reply.refuse(x, 'missingKey');
    reply.refuse(x, 'missingKey', `no API key: ${hint}`, hint);
  }
  /** A session's key, as this request sent it: the sessions scrub it from now on (a fleet's other hosts learn it so). */
  function sawSessionKey(x: Exchange): void {
    const found = findCredential(x.compiled.accept ?? DEFAULT_ACCEPT, {
      headers: x.req.headers,
      url: x.req.url ?? '/',
      rawHeaders: x.req.rawHeaders,
    });
    if (found?.candidate !== undefined) p.sessions?.sawKey(found.candidate);
  }
  return {
    name: 'auth',
    run(x, next) {
      const { compiled, req } = x;
      let auth =
        compiled.accept === undefined
          ? checkConnection(req.headers, compiled.key, req.rawHeaders, req.socket)
          : checkAccepted(
              compiled.accept,
              { headers: req.headers, url: req.url ?? '/', rawHeaders: req.rawHeaders },
              compiled.key,
            );
      if (auth !== 'missing' && auth !== 'invalid') x.keyVerdict = auth;
      else if (auth === 'invalid' && x.scope.key !== undefined) {
        auth = sessionKey(x);
        if (auth === 'ok') sawSessionKey(x);
      }
      if (auth === 'missing') return refuseMissing(x);
      if (auth === 'invalid') return reply.refuse(x, 'invalidKey');
      if (auth !== 'ok') x.named = auth; // a key of `keys:`: its name for `errors:` templates (`key.name`)
      reply.retryAfters.arrive(x); // early retries
      next(x);
    },
  };
}

/** The verdict for the key made for the request's session: `ok` (it stands for `apiKey` there) or `invalid`. */
function sessionKey(x: Exchange): AuthVerdict {
  const { req, compiled } = x;
  const key = x.scope.key!;
  const verdict =
    compiled.accept === undefined
      ? checkAuth(req.headers, key, req.rawHeaders)
      : checkAccepted(compiled.accept, { headers: req.headers, url: req.url ?? '/', rawHeaders: req.rawHeaders }, key);
  return verdict === 'ok' ? 'ok' : 'invalid';
}
