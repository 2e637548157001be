import type { AnswerList, Config, ResponseConfig } from '../config/types.js';
import type { FieldPath } from '../config/field-path.js';
import { isStatic } from '../answer/template.js';
import { isObject, type JsonObject } from '../openapi/json-pointer.js';
import { loadDescription, operationFor, type Operation } from './description.js';
import { compileAll } from './request.js';
import { loadAjv, schemaSet, type SchemaSet } from './schemas.js';
import { paramOf } from './violations.js';
import { encodeToken, locate } from './pointers.js';

/**
 * What `mockapi validate` adds for a config with `openapi.spec`: every schema of the description
 * compiled, and every static body an endpoint answers with checked against its operation's
 * response schema for that status.
 */

/** A problem found, at its field. */
export interface DescriptionProblem {
  path: FieldPath;
  message: string;
}

/** The response of `status` (exact, then `2XX`, then `default`) and its canonical pointer. */
function responseFor(doc: JsonObject, operation: Operation, status: number): { node: JsonObject; pointer: string } | undefined {
  for (const key of [String(status), `${String(status)[0]}XX`, 'default']) {
    if (operation.responses[key] === undefined) continue;
    const found = locate(doc, `${operation.pointer}/responses/${encodeToken(key)}`);
    if (found !== undefined && isObject(found.node)) return { node: found.node, pointer: found.pointer };
  }
  return undefined;
}

/** The static leaves of an endpoint, with their field paths. */
function leaves(response: ResponseConfig, answers: AnswerList | undefined, base: FieldPath): Array<[ResponseConfig, FieldPath]> {
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

function checkBody(set: SchemaSet, doc: JsonObject, operation: Operation, leaf: ResponseConfig, at: FieldPath): DescriptionProblem | undefined {
  if (leaf.statusExpression !== undefined || leaf.bodyFile !== undefined || leaf.body === undefined || typeof leaf.body === 'string' || !isStatic(leaf.body)) return undefined;
  const response = responseFor(doc, operation, leaf.status);
  // A status the description does not list (a 404 of a mock, say) has no schema to follow.
  if (response === undefined) return undefined;
  const content = isObject(response.node.content) ? response.node.content : {};
  const entry = Object.entries(content).find(([type]) => /[/+]json\s*(;|$)/i.test(type));
  if (entry === undefined || !isObject(entry[1]) || entry[1].schema === undefined) return undefined;
  const check = set.compileResponseAt(`${response.pointer}/content/${encodeToken(entry[0])}/schema`);
  if (check(leaf.body)) return undefined;
  const error = check.errors?.[0];
  const extra = error?.params.missingProperty ?? error?.params.additionalProperty;
  const pointer = `${error?.instancePath ?? ''}${typeof extra === 'string' ? `/${extra}` : ''}`;
  const field = paramOf(pointer) ?? 'the body';
  return { path: [...at, 'body'], message: `does not match the ${leaf.status} response of ${operation.key}: ${field} ${error?.keyword === 'required' ? 'is required' : (error?.message ?? 'is invalid')}${(check.errors?.length ?? 0) > 1 ? ` (and ${(check.errors?.length ?? 1) - 1} more)` : ''}` };
}

/** Compiles the description's schemas and checks the config's static bodies against it. */
export async function checkAgainstDescription(config: Config): Promise<DescriptionProblem[]> {
  if (config.openapi === undefined) return [];
  const read = await loadDescription(config.openapi.spec);
  if (!read.ok) return [{ path: ['openapi', 'spec'], message: read.message }];
  await loadAjv();
  const { description } = read;
  const set = schemaSet(description);
  const problems: DescriptionProblem[] = compileAll(description, set).map((message) => ({ path: ['openapi', 'spec'], message }));
  config.endpoints.forEach((endpoint, i) => {
    if (endpoint.openapiSpec !== undefined && endpoint.openapiSpec !== config.openapi?.spec) return; // another description's
    const operation = operationFor(description, endpoint.method, endpoint.path, endpoint.openapi);
    if (operation === undefined) return;
    for (const [leaf, at] of leaves(endpoint.response, endpoint.answers, ['endpoints', i])) {
      const problem = checkBody(set, description.doc, operation, leaf, at);
      if (problem !== undefined) problems.push(problem);
    }
  });
  return problems;
}
