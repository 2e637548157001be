/**
 * The control plane's `rotateKey`: checks the key asked for, rotates it in the served config file
 * (rotate-key.ts, loaded on first use), and answers once this server (and, on a fleet, every host)
 * serves it.
 */
import { isUsableKey } from '../config/keys.js';
import { DEFAULT_KEY_NAME } from '../config/types.js';
import { ControlError } from './control-error.js';
import type { ControlPlaneDeps } from './control-types.js';

/** As `mockapi rotate-key` on the served file; `name` is a key of `keys:` (default: `apiKey`). */
export async function rotateServedKey(
  deps: ControlPlaneDeps,
  key: string | undefined,
  name: string | undefined,
): Promise<{ key: string }> {
  const { holder } = deps.runtime;
  const file = holder.current.config.file;
  if (file === undefined)
    throw new ControlError(
      409,
      'conflict',
      'the config was given as an object, not a file: there is no file to rotate the key in',
    );
  if (key !== undefined && (typeof key !== 'string' || !isUsableKey(key))) {
    throw new ControlError(400, 'bad_request', 'key must be printable ASCII without spaces or ":", as apiKey requires');
  }
  const messages: string[] = [];
  // Loaded on first use: it brings the YAML editor, which a server that never rotates does not need.
  const { rotateKeyFile } = await import('./rotate-key.js');
  const rotated = await rotateKeyFile(
    { config: file, key, ...(name === undefined ? {} : { name }) },
    { err: (line) => messages.push(line) },
  );
  if (rotated === undefined) throw new ControlError(409, 'conflict', messages.join('\n'));
  for (const line of messages) deps.logger.info(line);
  // A server started without watching serves the new key only when told; one that watches may not have seen it yet.
  await deps.runtime.reload();
  const served = holder.current.config;
  const now =
    name === undefined || name === DEFAULT_KEY_NAME ? served.apiKey : served.keys?.find((k) => k.name === name)?.key;
  if (now !== rotated.key)
    throw new ControlError(409, 'conflict', 'the config file changed again before the new key could be served');
  // On a host of a fleet: every host registered in its store rotates its own file, and confirms.
  for (const line of (await deps.fleet?.keyRotated(rotated.key, name)) ?? []) deps.logger.info(line);
  return { key: rotated.key };
}
