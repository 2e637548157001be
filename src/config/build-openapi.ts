import { resolve } from 'node:path';
import type { OpenApiConfig, ResponseConfig, ValidateMode } from './types.js';

type Obj = Record<string, unknown>;

/** Status of the `openapi.validate.answer` when it gives none. */
export const DEFAULT_VIOLATION_STATUS = 422;

/** The `openapi:` section of validated data, defaults applied; undefined when absent. */
export function buildOpenApi(
  raw: unknown,
  dir: string,
  buildLeaf: (leaf: Obj) => ResponseConfig,
): OpenApiConfig | undefined {
  if (raw === null || typeof raw !== 'object' || typeof (raw as Obj).spec !== 'string') return undefined;
  const section = raw as Obj;
  const validate = section.validate !== null && typeof section.validate === 'object' ? (section.validate as Obj) : {};
  const openapi: OpenApiConfig = {
    spec: resolve(dir, section.spec as string),
    requests: typeof validate.requests === 'string' ? (validate.requests as ValidateMode) : 'report',
  };
  if (validate.answer !== null && typeof validate.answer === 'object') {
    const answer = validate.answer as Obj;
    openapi.answer = buildLeaf({
      ...answer,
      status: typeof answer.status === 'number' ? answer.status : DEFAULT_VIOLATION_STATUS,
    });
  }
  return openapi;
}
