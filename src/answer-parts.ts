import type { AnswerParts } from './answer/parts.js';
import { compileStream } from './stream/compile.js';
import { compileSends, compileWebhooks } from './webhooks/compile.js';

/**
 * What each capability compiles of a config, handed to the answer compiler (src/answer/compile.ts)
 * from the capability's folder: one line each, written once beside the composition root, as the
 * request steps are in src/request-steps.ts. Called once per load, never per request. A capability
 * that owns a field of an answer or of the config adds its compile step here and types what it
 * makes in its own folder (src/answer/parts.ts).
 */
export const ANSWER_PARTS: AnswerParts = {
  sends: compileSends, //   a leaf's `send:` (src/webhooks/compile.ts)
  stream: compileStream, // a leaf's `stream:` (src/stream/compile.ts)
  webhooks: compileWebhooks, // `webhooks:`, URLs and secrets resolved (src/webhooks/compile.ts)
  // `openapi:` (src/validate/step.ts): the description and ajv load only for a config that has it
  validation: async (config, read) => (await import('./validate/step.js')).planValidation(config, read),
};
