import { routePathProblem, routeShape } from '../route-path.js';
import { HTTP_METHODS, type HttpMethod } from '../config/types.js';
import { operationAnswers, type Answer, type AnswerContext, type CodeAnswers } from './answers.js';
import { deref, isObject, type Json, type JsonObject } from '../description/json-pointer.js';
import { basePath } from '../description/server-base.js';
import { importedVerify } from './verify-example.js';

/** An operation of the description as a config endpoint. */
export interface ImportedEndpoint {
  /** `GET /pets/{petId}`: method and path as the description writes them; the `openapi:` marker. */
  key: string;
  /** The comment above the endpoint: the operation's summary (else its operationId, else the key). */
  summary: string;
  method: HttpMethod;
  path: string;
  answers: Answer[];
  /** The operation's other responses, picked with `Prefer: code=<status>`; absent when it has none. */
  codes?: CodeAnswers[];
  generated: boolean;
  /** The `verify:` example written with it (mockapi verify): parameters from the description, the default answer's status. */
  verify?: Record<string, unknown>;
}

export interface SkippedOperation {
  key: string;
  reason: string;
}

export interface Mapping {
  /** How many operations the description has. */
  read: number;
  endpoints: ImportedEndpoint[];
  skipped: SkippedOperation[];
  /** Responses whose schema no generated value satisfies (see OperationAnswers.unsatisfied). */
  unsatisfied: Array<{ key: string; status: number }>;
}

const OPERATION_METHODS = ['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace'];

/** A parameter name as a mockapi path can hold it: letters, digits and `_`, not starting with a digit. */
function paramName(name: string): string {
  const cleaned = name.replace(/[^A-Za-z0-9_]/g, '_');
  return /^[A-Za-z_]/.test(cleaned) ? cleaned : `_${cleaned}`;
}

/**
 * `/pets/{petId}` → `/pets/:petId`, `/Accounts/{Sid}.json` → `/Accounts/:Sid.json` and
 * `/levels:append` → `/levels::append` (a literal `:` is written `::`), under `base`; or why it
 * cannot be a mockapi path.
 */
function toRoutePath(base: string, template: string): { path: string } | { reason: string } {
  const escape = (text: string): string => text.replace(/:/g, '::');
  const segments = template.split('/').map((segment) =>
    segment
      .split(/(\{[^{}]+\})/)
      .map((piece) => (/^\{[^{}]+\}$/.test(piece) ? `:${paramName(piece.slice(1, -1))}` : escape(piece)))
      .join(''),
  );
  const joined = escape(base) + (template === '/' && base !== '' ? '' : segments.join('/'));
  const path = joined === '' ? '/' : joined;
  if (/[{}]/.test(path)) return { reason: 'the path holds a `{` or `}` that is not a whole parameter' };
  if (/[?#%\s]/.test(path))
    return { reason: `the path ${path} holds ?, #, % or whitespace, which a mockapi path cannot` };
  const problem = routePathProblem(path);
  return problem === undefined ? { path } : { reason: `the path ${path} ${problem}` };
}

/** One line: the summary, else the operationId, else the key. */
function summaryOf(operation: JsonObject, key: string): string {
  for (const candidate of [operation.summary, operation.operationId]) {
    if (typeof candidate === 'string' && candidate.trim() !== '') return candidate.replace(/\s+/g, ' ').trim();
  }
  return key;
}

/**
 * Maps every operation of a bundled description to an endpoint, in the description's order.
 * `taken` holds the routes (`GET /users/:`, see routeShape) of the user's own endpoints with how
 * they are written; an operation on one of them, or on a route an earlier operation took, is
 * skipped with the reason.
 */
export function mapOperations(ctx: AnswerContext, taken: Map<string, string>, keepPaths = false): Mapping {
  const { doc } = ctx;
  // keepPaths: the config is served under the server URL's path (`server.basePath`), so paths stay as written.
  const base = keepPaths ? '' : basePath(doc);
  const routes = new Map(taken);
  const mapping: Mapping = { read: 0, endpoints: [], skipped: [], unsatisfied: [] };
  const paths = isObject(doc.paths) ? doc.paths : {};
  for (const [template, rawItem] of Object.entries(paths)) {
    const item = deref(doc, rawItem as Json);
    if (!isObject(item) || !template.startsWith('/')) continue;
    for (const method of OPERATION_METHODS) {
      const operation = deref(doc, item[method]);
      if (!isObject(operation)) continue;
      mapping.read++;
      const upper = method.toUpperCase();
      const key = `${upper} ${template}`;
      if (!(HTTP_METHODS as readonly string[]).includes(upper)) {
        mapping.skipped.push({ key, reason: `mockapi endpoints cannot answer ${upper}` });
        continue;
      }
      const route = toRoutePath(base, template);
      if ('reason' in route) {
        mapping.skipped.push({ key, reason: route.reason });
        continue;
      }
      const shape = `${upper} ${routeShape(route.path)}`;
      const holder = routes.get(shape);
      if (holder !== undefined) {
        mapping.skipped.push({ key, reason: `${upper} ${route.path} would collide with ${holder}` });
        continue;
      }
      routes.set(shape, key);
      const { answers, codes, generated, unsatisfied } = operationAnswers(
        ctx,
        operation,
        `/paths/${template.replace(/~/g, '~0').replace(/\//g, '~1')}/${method}`,
      );
      const verify = importedVerify(ctx, item, operation, route.path, paramName, answers[0]?.status ?? 200);
      mapping.endpoints.push({
        key,
        summary: summaryOf(operation, key),
        method: upper as HttpMethod,
        path: route.path,
        answers,
        ...(codes === undefined ? {} : { codes }),
        generated,
        verify,
      });
      for (const status of unsatisfied ?? []) mapping.unsatisfied.push({ key, status });
    }
  }
  return mapping;
}

/** The keys (`GET /pets/{petId}`) of every operation of a description, cheaply: no answers are made. */
export function operationKeysOf(doc: JsonObject): Set<string> {
  const keys = new Set<string>();
  const paths = isObject(doc.paths) ? doc.paths : {};
  for (const [template, rawItem] of Object.entries(paths)) {
    const item = deref(doc, rawItem as Json);
    if (!isObject(item)) continue;
    for (const method of OPERATION_METHODS)
      if (isObject(deref(doc, item[method]))) keys.add(`${method.toUpperCase()} ${template}`);
  }
  return keys;
}
