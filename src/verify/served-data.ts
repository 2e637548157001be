import { dirname, resolve } from 'node:path';
import { readYamlFast } from '../config/fast-read.js';
import { configFromObject, parseConfig } from '../config/load.js';
import { readPositioned } from '../config/read-positioned.js';
import type { Config, ConfigIssue } from '../config/types.js';
import { verifyServedConfig } from './mock-config.js';

/** A config ready to verify: the Config, and the data the run serves (see verifyServedConfig). */
export type VerifyLoad =
  { ok: true; config: Config; served: Record<string, unknown> } | { ok: false; issues: ConfigIssue[] };

const isMapping = (v: unknown): v is Record<string, unknown> =>
  v !== null && typeof v === 'object' && !Array.isArray(v);

/**
 * Reads a config file's bytes for a verify run, reading the YAML once: the fast reader's data is
 * checked as `parseConfig` checks it and becomes the served config too. When the fast reader
 * declines, the config has problems (reported by `parseConfig`, at their lines and columns) or an
 * OpenAPI description to check, the file goes through `parseConfig` as every command's does.
 */
export async function loadForVerify(bytes: Buffer, shown: string): Promise<VerifyLoad> {
  const file = resolve(shown);
  const dir = dirname(file);
  const text = bytes.toString('utf8');
  const fast =
    text.startsWith('\uFEFF') || !Buffer.from(text, 'utf8').equals(bytes) ? undefined : readYamlFast(text)?.data;
  if (isMapping(fast) && fast.openapi === undefined) {
    const checked = configFromObject(fast, dir);
    if (checked.ok) return { ok: true, config: checked.config, served: verifyServedConfig(fast, dir) };
  }
  const loaded = await parseConfig(bytes, shown);
  if (!loaded.ok) return loaded;
  let data: unknown = fast;
  if (!isMapping(data)) {
    const read = readPositioned(text, shown);
    data = read.ok ? read.data : undefined;
  }
  if (!isMapping(data))
    return {
      ok: false,
      issues: [
        { file: shown, line: 0, column: 0, path: '', message: 'the config could not be read again to serve it' },
      ],
    };
  return { ok: true, config: loaded.config, served: verifyServedConfig(data, dir) };
}
