import { alikeLines, silentLogger, type Logger } from '../logger.js';
import { SLOT_ENV } from './ids.js';

/**
 * The logger of a `serve --workers` worker. Every worker watches the config and reloads it on its
 * own, so each would print the same reload line and the same warnings (a config not reloaded, a
 * setting that needs a restart, an unset variable the config reads): the worker in slot 0 (its
 * replacement takes the slot) prints those, the others keep them to themselves. What a worker sees
 * alone (its requests, its own connections) is still printed by that worker.
 */
export function workerLines(logger: Logger, slot = Number(process.env[SLOT_ENV] ?? 0)): Logger {
  return { ...logger, alike: slot === 0 ? alikeLines(logger) : silentLogger };
}
