/**
 * Dynamic answers, the pure part: `${…}` expressions, `when` matchers, body templates
 * with `$repeat`, and the seeded random source they draw from. Everything compiles once per config
 * load into plain closures over a {@link RequestContext}; problems come back as values with their
 * field path (and offset inside a string), for the config loader to place at a line and column.
 *
 * Importing this module does not load @faker-js/faker: a compiled value says `usesFaker`, and
 * {@link loadFaker} must resolve before such a value is evaluated.
 */
export type { AnswerIssue, AnswerRandom, Compiled, IssuePath, RequestContext } from './context.js';
export { createAnswerRandom, randomUuid, randomIntBetween } from '../seeded.js';
export {
  compileString,
  hasTemplateSyntax,
  type CompiledString,
  type StringIssue,
  type StringResult,
} from './string-template.js';
export type { ExpressionOptions } from './compile.js';
export { loadFaker, isFakerLoaded, FAKER_REFERENCE_DATE } from './faker.js';
export { FAKER_API } from './faker-api.js';
export { parseOffset } from './functions.js';
export { textOf as valueText } from './values.js';
export { compileWhen, includesPartial, MATCH_INPUT_LIMIT, type CompiledWhen, type WhenOptions } from './matchers.js';
export {
  AnswerTooLarge,
  compileTemplate,
  isStatic,
  MAX_ANSWER_ITEMS,
  MAX_ANSWER_TEXT,
  MAX_REPEAT,
  type CompiledTemplate,
  type TemplateOptions,
} from './template.js';
