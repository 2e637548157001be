import type { AnswerList, Config, ResponseConfig } from '../config/types.js';
import type { FieldPath } from '../config/field-path.js';
import { isStatic } from '../expression/template.js';
import { escapeTemplates, resolveExample } from '../openapi/answers.js';
import { deref, isObject, type Json, type JsonObject } from '../description/json-pointer.js';
import { loadDescription, operationFor, type Operation } from '../description/description.js';
import { compileAll } from './compile-operation.js';
import { reported } from './request.js';
import { loadAjv, schemaSet, type SchemaCheck, type SchemaSet } from './schemas.js';
import { paramOf } from './violations.js';
import { encodeToken, locate } from '../description/pointers.js';

/**
 * What `mockapi validate` adds for a config with `openapi.spec`: every schema of the description
 * compiled, and every static body an endpoint answers with checked against its operation's
 * response schema for that status. What is the description's own doing — a schema ajv cannot
 * compile, an example of the description that breaks the description's own schema, served as
 * written — is a warning: the config is as the description makes it, and `validate` passes.
 */

/** Why a problem is a warning: the description's schema cannot be compiled, or its own example breaks it. */
export type WarningKind = 'schema' | 'example';

/** A problem found, at its field; a warning when `warning` says why. */
export interface DescriptionProblem {
  path: FieldPath;
  message: string;
  warning?: WarningKind;
}

/** The response of `status` (exact, then `2XX`, then `default`) and its canonical pointer. */
function responseFor(
  doc: JsonObject,
  operation: Operation,
  status: number,
): { node: JsonObject; pointer: string } | undefined {
  for (const key of [String(status), `${String(status)[0]}XX`, 'default']) {
    if (operation.responses[key] === undefined) continue;
    const found = locate(doc, `${operation.pointer}/responses/${encodeToken(key)}`);
    if (found !== undefined && isObject(found.node)) return { node: found.node, pointer: found.pointer };
  }
  return undefined;
}

/** The static leaves of an endpoint, with their field paths. */
function leaves(
  response: ResponseConfig,
  answers: AnswerList | undefined,
  base: FieldPath,
): Array<[ResponseConfig, FieldPath]> {
  if (answers === undefined) return [[response, [...base, 'response']]];
  const out: Array<[ResponseConfig, FieldPath]> = [];
  const visit = (list: AnswerList, at: FieldPath): void => {
    list.items.forEach((item, i) => {
      if (item.list !== undefined) visit(item.list, [...at, i, item.list.kind]);
      else out.push([item.leaf, [...at, i]]);
    });
  };
  visit(answers, [...base, answers.kind]);
  return out;
}

function isDeepEqual(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (
    typeof a !== 'object' ||
    typeof b !== 'object' ||
    a === null ||
    b === null ||
    Array.isArray(a) !== Array.isArray(b)
  )
    return false;
  const ka = Object.keys(a);
  return (
    ka.length === Object.keys(b).length &&
    ka.every(
      (k) => Object.hasOwn(b, k) && isDeepEqual((a as Record<string, unknown>)[k], (b as Record<string, unknown>)[k]),
    )
  );
}

/** Whether `body` is one of the media type's own examples, as an import writes it (`$ref`s followed, `${` escaped). */
function isOwnExample(doc: JsonObject, media: JsonObject, body: unknown): boolean {
  const candidates: Json[] = [];
  if (Object.hasOwn(media, 'example')) candidates.push(media.example as Json);
  const examples = deref(doc, media.examples);
  if (isObject(examples)) {
    for (const raw of Object.values(examples)) {
      const example = deref(doc, raw);
      if (isObject(example) && Object.hasOwn(example, 'value')) candidates.push(example.value as Json);
    }
  }
  return candidates.some((value) => isDeepEqual(escapeTemplates(resolveExample(doc, value)), body));
}

/** What checking answers against response schemas shares: schemas compiled once per pointer, problems said once. */
interface ResponseChecks {
  set: SchemaSet;
  compiled: Map<string, SchemaCheck | string>;
  problems: DescriptionProblem[];
}

function responseCheck(
  checks: ResponseChecks,
  operation: Operation,
  status: number,
  pointer: string,
): SchemaCheck | undefined {
  let check = checks.compiled.get(pointer);
  if (check === undefined) {
    try {
      check = checks.set.compileResponseAt(pointer);
    } catch (err) {
      check = (err as Error).message;
      const message = `${operation.key}: the ${status} response schema (#${pointer}) cannot be compiled: ${check}; answers are not checked against it`;
      checks.problems.push({ path: ['openapi', 'spec'], message, warning: 'schema' });
    }
    checks.compiled.set(pointer, check);
  }
  return typeof check === 'string' ? undefined : check;
}

function checkBody(
  checks: ResponseChecks,
  doc: JsonObject,
  operation: Operation,
  leaf: ResponseConfig,
  at: FieldPath,
): DescriptionProblem | undefined {
  if (
    leaf.statusExpression !== undefined ||
    leaf.bodyFile !== undefined ||
    leaf.body === undefined ||
    typeof leaf.body === 'string' ||
    !isStatic(leaf.body)
  )
    return undefined;
  const response = responseFor(doc, operation, leaf.status);
  // A status the description does not list (a 404 of a mock, say) has no schema to follow.
  if (response === undefined) return undefined;
  const content = isObject(response.node.content) ? response.node.content : {};
  const entry = Object.entries(content).find(([type]) => /[/+]json\s*(;|$)/i.test(type));
  if (entry === undefined || !isObject(entry[1]) || entry[1].schema === undefined) return undefined;
  const check = responseCheck(
    checks,
    operation,
    leaf.status,
    `${response.pointer}/content/${encodeToken(entry[0])}/schema`,
  );
  if (check === undefined || check(leaf.body)) return undefined;
  const errors = reported(check);
  const error = errors[0];
  const extra = error?.params.missingProperty ?? error?.params.additionalProperty;
  const pointer = `${error?.instancePath ?? ''}${typeof extra === 'string' ? `/${extra}` : ''}`;
  const field = paramOf(pointer) ?? 'the body';
  const more = errors.length > 1 ? ` (and ${errors.length - 1} more)` : '';
  const why = `${field} ${error?.keyword === 'required' ? 'is required' : (error?.message ?? 'is invalid')}${more}`;
  const media = deref(doc, entry[1]);
  if (isObject(media) && isOwnExample(doc, media, leaf.body)) {
    return {
      path: [...at, 'body'],
      message: `is the description's own example for the ${leaf.status} response of ${operation.key}, which breaks its own schema: ${why}`,
      warning: 'example',
    };
  }
  return { path: [...at, 'body'], message: `does not match the ${leaf.status} response of ${operation.key}: ${why}` };
}

/**
 * Compiles the description's schemas and checks the config's static bodies against it: every
 * problem found, errors and warnings (see {@link DescriptionProblem}); never throws for the
 * description's content.
 */
export async function checkAgainstDescription(config: Config): Promise<DescriptionProblem[]> {
  if (config.openapi === undefined) return [];
  const read = await loadDescription(config.openapi.spec);
  if (!read.ok) return [{ path: ['openapi', 'spec'], message: read.message }];
  await loadAjv();
  const { description } = read;
  const set = schemaSet(description);
  const problems: DescriptionProblem[] = compileAll(description, set).map((p) => ({
    path: ['openapi', 'spec'],
    message: `${p.operation}: the ${p.part} schema (#${p.pointer}) cannot be compiled: ${p.message}; requests are validated without it`,
    warning: 'schema',
  }));
  const checks: ResponseChecks = { set, compiled: new Map(), problems };
  config.endpoints.forEach((endpoint, i) => {
    if (endpoint.openapiSpec !== undefined && endpoint.openapiSpec !== config.openapi?.spec) return; // another description's
    const operation = operationFor(description, endpoint.method, endpoint.path, endpoint.openapi);
    if (operation === undefined) return;
    for (const [leaf, at] of leaves(endpoint.response, endpoint.answers, ['endpoints', i])) {
      const problem = checkBody(checks, description.doc, operation, leaf, at);
      if (problem !== undefined) problems.push(problem);
    }
  });
  return problems;
}
