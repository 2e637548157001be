import type { Client } from '../state/redis-client.js';
import type { Script } from './redis-scripts.js';

/** The resource store could not answer (down, too slow, a refused command): a 503 for the request, not a bug. */
export class ResourceStoreError extends Error {
  override name = 'ResourceStoreError';
}

/** Longest wait for a reply. */
const TIMEOUT_MS = 3000;

type Reply = unknown;

/**
 * The resource store's connection: commands with a deadline (one sweep for all of them, not a timer
 * each), and scripts run by their hash (loaded again when Redis forgot them after a restart).
 */
export class Connection {
  private readonly waiting = new Set<{ deadline: number; fail: (err: Error) => void }>();
  private readonly sweep: NodeJS.Timeout;

  constructor(readonly client: Client) {
    this.sweep = setInterval(() => {
      const now = Date.now();
      for (const entry of this.waiting) {
        if (entry.deadline > now) break;
        this.waiting.delete(entry);
        entry.fail(new ResourceStoreError(`the resource store gave no answer within ${TIMEOUT_MS} ms`));
      }
    }, 250);
    this.sweep.unref();
  }

  send(args: string[]): Promise<Reply> {
    return new Promise((done, fail) => {
      const entry = { deadline: Date.now() + TIMEOUT_MS, fail };
      this.waiting.add(entry);
      this.client.sendCommand(args).then(
        (reply) => {
          this.waiting.delete(entry);
          done(reply);
        },
        (err: unknown) => {
          this.waiting.delete(entry);
          fail(
            new ResourceStoreError(`the resource store failed: ${err instanceof Error ? err.message : String(err)}`),
          );
        },
      );
    });
  }

  async run(script: Script, keys: string[], args: string[]): Promise<Reply> {
    try {
      return await this.send(['EVALSHA', script.sha, String(keys.length), ...keys, ...args]);
    } catch (err) {
      if (!(err instanceof Error) || !err.message.includes('NOSCRIPT')) throw err;
      return this.send(['EVAL', script.source, String(keys.length), ...keys, ...args]);
    }
  }

  async close(): Promise<void> {
    clearInterval(this.sweep);
    if (this.client.isReady) await this.client.close().catch(() => this.client.destroy());
    else this.client.destroy();
  }
}
