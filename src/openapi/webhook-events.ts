import { isObject, resolvePointer, type Json, type JsonObject } from '../description/json-pointer.js';
import { sampleBody, type Sampler } from './sample.js';

/** One `webhooks.events` template made from a description: the event's name and its sample data. */
export interface ImportedEvent {
  readonly name: string;
  /** Where it came from: `webhooks.<name>` or `callbacks` of an operation. */
  readonly from: string;
  readonly template: { envelope: 'none'; data: Json };
}

const METHODS = ['post', 'put', 'patch', 'get', 'delete'];

/** A `$ref` followed once (descriptions put path items and bodies under components). */
function deref(doc: JsonObject, node: Json | undefined): Json | undefined {
  if (isObject(node) && typeof node.$ref === 'string' && node.$ref.startsWith('#'))
    return resolvePointer(doc, node.$ref.slice(1));
  return node;
}

/** The sample JSON body the path item's first operation (POST first) receives, or null. */
function eventData(
  doc: JsonObject,
  pathItem: Json | undefined,
  sampler: Sampler,
  expand: (schema: Json) => Json,
): Json {
  const item = deref(doc, pathItem);
  if (!isObject(item)) return null;
  for (const method of METHODS) {
    const operation = item[method];
    if (!isObject(operation)) continue;
    const body = deref(doc, operation.requestBody);
    const content = isObject(body) && isObject(body.content) ? body.content : undefined;
    const media = content === undefined ? undefined : (content['application/json'] ?? Object.values(content)[0]);
    if (!isObject(media)) return null;
    if (media.example !== undefined) return media.example;
    return media.schema === undefined ? null : sampleBody(sampler, expand, media.schema);
  }
  return null;
}

/**
 * The event templates a description implies: each 3.1 `webhooks` entry, and each `callbacks`
 * entry of an operation, become `webhooks.events` templates (envelope `none`, data sampled from
 * the body the receiver gets). The first of two events of one name wins.
 */
export function importedEvents(doc: JsonObject, sampler: Sampler, expand: (schema: Json) => Json): ImportedEvent[] {
  const events = new Map<string, ImportedEvent>();
  const add = (name: string, from: string, pathItem: Json | undefined): void => {
    if (!events.has(name))
      events.set(name, { name, from, template: { envelope: 'none', data: eventData(doc, pathItem, sampler, expand) } });
  };
  if (isObject(doc.webhooks))
    for (const [name, item] of Object.entries(doc.webhooks)) add(name, `webhooks.${name}`, item);
  if (isObject(doc.paths)) {
    for (const [path, rawItem] of Object.entries(doc.paths)) {
      const item = deref(doc, rawItem);
      if (!isObject(item)) continue;
      for (const method of METHODS) {
        const operation = item[method];
        if (!isObject(operation) || !isObject(operation.callbacks)) continue;
        for (const [name, rawCallback] of Object.entries(operation.callbacks)) {
          const callback = deref(doc, rawCallback);
          if (!isObject(callback)) continue;
          const first = Object.values(callback)[0];
          add(name, `${method.toUpperCase()} ${path} callbacks.${name}`, first);
        }
      }
    }
  }
  return [...events.values()];
}
