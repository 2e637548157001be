import { generateApiKey } from '../../config/keys.js';
import { importDescription } from '../../openapi/import.js';
import type { CommandIO } from './io.js';
import type { Json, JsonObject } from '../../description/json-pointer.js';

/**
 * `mockapi import <spec>`: writes the operations of an OpenAPI description into the config, or with
 * `check` only compares them. The work and its dependencies live in src/openapi/, loaded only here.
 */
export async function runImport(
  spec: string,
  opts: { config: string; check?: boolean; allowRefsUnder?: string[]; lookAlike?: boolean; resources?: boolean },
  io: CommandIO,
): Promise<number> {
  // Generated answers are held to their schemas with request validation's own reading of them.
  const answerCheck = async (doc: JsonObject, version: string): Promise<(pointer: string, value: Json) => boolean> =>
    (await import('../../validate/answer-check.js')).createAnswerCheck(doc, version);
  const outcome = await importDescription({
    spec,
    config: opts.config,
    check: opts.check,
    allowRefsUnder: opts.allowRefsUnder,
    newApiKey: generateApiKey,
    lookAlike: opts.lookAlike,
    answerCheck,
    resources: opts.resources,
  });
  for (const line of outcome.lines) io.err(line);
  return outcome.code;
}
