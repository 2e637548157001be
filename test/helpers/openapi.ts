import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { ROOT, runCli, type CliResult } from './cli.js';

/** The committed OpenAPI descriptions (test/fixtures/openapi/README.md names their sources). */
export const OPENAPI_FIXTURES = join(ROOT, 'test', 'fixtures', 'openapi');

/** `mockapi import <spec> -c <config> [extra…]`, run in `cwd`. */
export function runImport(spec: string, config: string, extra: string[] = [], cwd = ROOT): Promise<CliResult> {
  // Only a guard against a hang, under the tests' own timeouts: importing a large description is
  // seconds of CPU (GitHub's 13 MB: 9 s), a minute or more on a machine busy with other work.
  return runCli(['import', spec, '-c', config, ...extra], { cwd, timeoutMs: 170_000 });
}

/** The `apiKey` of a config file. */
export async function apiKeyOf(config: string): Promise<string> {
  const key = /^apiKey: (\S+)$/m.exec(await readFile(config, 'utf8'))?.[1];
  if (key === undefined) throw new Error(`no apiKey in ${config}`);
  return key;
}
