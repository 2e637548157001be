import { resolve } from 'node:path';
import { DEFAULT_HTTPS_PORT } from '../config/build.js';
import type { HttpsConfig } from '../config/types.js';

/**
 * HTTPS as asked of {@link startMockServer} (the `serve --https [port]`, `--tls-cert`, `--tls-key`
 * flags): `true` turns it on with the config's `server.https` or the defaults (port 4443, a
 * certificate from the project's CA), `false` turns it off whatever the config says, an object
 * overrides the config's fields one by one. Relative paths are resolved against the working folder.
 */
export type HttpsOption =
  | boolean
  | {
      /** `0` picks any free port. Default: `server.https.port`, else 4443. */
      port?: number;
      /** A PEM certificate file of your own; needs `key` (here or in the config). */
      cert?: string;
      /** The PEM private key file of `cert`. */
      key?: string;
      /** More names for the generated certificate, besides localhost, 127.0.0.1, ::1 and the bound host. */
      hosts?: string[];
    };

/** The HTTPS a server runs with: the option over the config's `server.https`; undefined = HTTP only. */
export function httpsSettings(
  option: HttpsOption | undefined,
  fromConfig: HttpsConfig | undefined,
  cwd: string = process.cwd(),
): HttpsConfig | undefined {
  if (option === false) return undefined;
  if (option === undefined) return fromConfig;
  const base: HttpsConfig = fromConfig ?? { port: DEFAULT_HTTPS_PORT, hosts: [] };
  if (option === true) return base;
  const merged: HttpsConfig = { ...base };
  if (option.port !== undefined) merged.port = option.port;
  if (option.cert !== undefined) merged.cert = resolve(cwd, option.cert);
  if (option.key !== undefined) merged.key = resolve(cwd, option.key);
  if (option.hosts !== undefined) merged.hosts = [...base.hosts, ...option.hosts];
  return merged;
}
