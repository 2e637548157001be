import { stat } from 'node:fs/promises';
import { dirname, resolve } from 'node:path';
import { CaError, ensureProjectCa } from '../../tls/project-ca.js';
import { EXIT_FAILURE, EXIT_OK, EXIT_USAGE, type CommandIO } from './io.js';

/**
 * `mockapi tls env|path`: where the project's CA certificate is (`.mockapi/tls/ca.pem` beside the
 * config), made first when there is none yet, so clients can trust it before the server ever ran.
 * `env` prints `NODE_EXTRA_CA_CERTS=<path>`, `path` the path alone, on stdout.
 */
export async function runTls(what: string, opts: { config: string }, io: CommandIO): Promise<number> {
  if (what !== 'env' && what !== 'path') {
    io.err(`mockapi: tls takes env or path, got ${JSON.stringify(what)}`);
    return EXIT_USAGE;
  }
  const configFile = resolve(opts.config);
  const isFile = await stat(configFile).then(
    (s) => s.isFile(),
    () => false,
  );
  if (!isFile) {
    io.err(`mockapi: no config file at ${opts.config}; the local CA lives beside it (pass -c <file>)`);
    return EXIT_FAILURE;
  }
  try {
    const ca = await ensureProjectCa(dirname(configFile));
    io.out(what === 'env' ? `NODE_EXTRA_CA_CERTS=${ca.certFile}` : ca.certFile);
    return EXIT_OK;
  } catch (err) {
    if (err instanceof CaError) {
      io.err(`mockapi: ${err.message}`);
      return EXIT_FAILURE;
    }
    throw err;
  }
}
