import type { RouteTable } from '../control/admin-api.js';
import { ControlError } from '../control/control-error.js';

/**
 * `GET /__mockapi/tls/ca.pem`: the certificate of the project's CA that signed this server's
 * HTTPS certificate, for a browser or a client to trust. 404 when there is none (HTTPS off, or a
 * certificate of the user's own).
 */
export function tlsRoutes(ca: string | undefined): RouteTable {
  return {
    'tls/ca.pem': {
      GET: (_req, res) => {
        if (ca === undefined)
          throw new ControlError(
            404,
            'not_found',
            'this server has no local CA: HTTPS is off or serves a certificate of its own',
          );
        res.writeHead(200, {
          'content-type': 'application/x-pem-file',
          'content-length': Buffer.byteLength(ca),
          'cache-control': 'no-store',
          'content-disposition': 'attachment; filename="mockapi-ca.pem"',
        });
        res.end(ca);
        return undefined;
      },
    },
  };
}
