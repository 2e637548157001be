// `serve --workers 2` with a Redis store of its own, for the tests of what covers every worker.
import { startServe, waitFor, writeConfig, type ServeProcess } from './cli.js';
import { startRedis } from './redis.js';
import { workerUrls } from './workers.js';

/** A running `serve --workers 2`: the process, each worker's own URL, and a stop for afterAll. */
export interface WorkersServe {
  serve: ServeProcess;
  own: string[];
  /** Stops serve (unless it has exited) and its Redis. */
  stop(): Promise<void>;
}

/** Starts `serve --workers 2` on `config` written in `dir`; resolves once both workers registered their own ports. */
export async function startWorkersServe(dir: string, config: string): Promise<WorkersServe> {
  const redis = await startRedis();
  const file = await writeConfig(dir, config);
  const serve = await startServe(['-c', file, '--workers', '2', '--store', redis.url, '--no-state', '--log', 'off'], {
    cwd: dir,
  });
  const own = await waitFor(async () => {
    const urls = await workerUrls(dir);
    return urls.length === 2 ? urls : undefined;
  });
  return {
    serve,
    own,
    async stop() {
      await serve.stop('SIGTERM');
      await redis.stop();
    },
  };
}
