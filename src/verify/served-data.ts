import { readYamlFast } from '../config/fast-read.js';
import { readPositioned } from '../config/read-positioned.js';
import { verifyServedConfig } from './mock-config.js';

/**
 * The config a verify run serves (see verifyServedConfig), from the text of a config file that
 * already loaded without problems; undefined if it cannot be read as a mapping after all.
 */
export function servedConfigOf(text: string, file: string, dir: string): Record<string, unknown> | undefined {
  let data = readYamlFast(text)?.data;
  if (data === undefined) {
    const read = readPositioned(text, file);
    if (read.ok) data = read.data;
  }
  if (data === null || typeof data !== 'object' || Array.isArray(data)) return undefined;
  return verifyServedConfig(data as Record<string, unknown>, dir);
}
