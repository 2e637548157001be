// The request check of one operation of a description, as the validation step makes it, for tests
// that drive it without a server (call loadAjv() first).
import type { Description } from '../../src/description/description.js';
import { operationCheck, type RequestInput } from '../../src/validate/request.js';
import { schemaSet } from '../../src/validate/schemas.js';
import type { Violation } from '../../src/validate/violations.js';

/** The check of the operation `key` (`GET /items/{id}`) of `desc`. */
export function checkOf(desc: Description, key: string): (input: RequestInput) => Violation[] {
  const operation = desc.operations.get(key);
  if (operation === undefined) throw new Error(`no ${key}`);
  return operationCheck(desc, schemaSet(desc), operation);
}

/** A GET of `url` (path and query), without headers or body. */
export const getRequest = (url: string): RequestInput => ({
  mockPath: url.split('?')[0] as string,
  url,
  headers: {},
  body: undefined,
});
