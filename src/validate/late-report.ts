import type { CompiledConfig } from '../answer/compile.js';
import { formatIssue, parseConfig, readConfigFile } from '../config/load.js';
import { OBJECT_LABEL } from '../config/limits.js';
import type { Logger } from '../logger.js';
import { descriptionReading } from './reading.js';
import { unknownOperation } from './step.js';

/**
 * `serve` starts without reading its OpenAPI description (the config check looks only at its
 * file: missing, a folder, too large); the first request that needs it reads it, and waits for it
 * (src/validate/reading.ts). Once it is read, this says what is wrong with it as a failed reload
 * does: the config's issues at their lines and columns, the same lines `mockapi validate` prints.
 * The requests those problems concern are answered without validation, with a note in the
 * journal, until the description or the config is fixed (both are watched; a reload reads the
 * description before it swaps, and keeps the last good config when it cannot be used).
 */
export async function readDescriptionLater(
  compiled: CompiledConfig,
  logger: Logger,
  open: () => boolean,
): Promise<void> {
  const { config } = compiled;
  if (config.openapi === undefined) return;
  const outcome = await descriptionReading(config.openapi).settled();
  const missing = outcome.ok ? unknownOperation(config, outcome.shared.description) : undefined;
  if (outcome.ok && missing === undefined) return;
  let lines: string[];
  if (config.file === undefined) {
    lines = [
      `${OBJECT_LABEL}: ${outcome.ok ? `endpoints: ${missing?.method} ${missing?.path}: the description has no operation ${missing?.openapi}` : `openapi.spec ${outcome.problem}`}`,
    ];
  } else {
    // Where each problem is: the whole config check, only now that it is known to fail.
    const read = await readConfigFile(config.file);
    const checked = read.ok ? await parseConfig(read.bytes, config.file) : read;
    // A config fixed since it was loaded: the reload its change starts says the rest.
    lines = checked.ok ? [] : checked.issues.map(formatIssue);
  }
  if (lines.length === 0 || !open()) return;
  logger.warn(
    `the OpenAPI description cannot be used as configured; the requests concerned are answered without validation until it is fixed:\n${lines.join('\n')}`,
  );
}
