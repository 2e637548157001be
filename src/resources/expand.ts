/**
 * Stripe's `expand`: the fields a request asks to expand (its body's and its query's), and the
 * object's text with each of them that holds an id replaced by the object it names.
 */
import { jsonAnswer, type ResourceAnswer } from './answers.js';
import { parseListQuery } from './list.js';
import { isPlainObject } from './merge.js';
import type { Call } from './operations.js';
import type { MaybePromise } from './store.js';

type Obj = Record<string, unknown>;

/** Nothing to expand (most requests): one list for all of them, never changed. */
const NO_EXPAND: readonly string[] = Object.freeze([]);

/** `expand[]` of Stripe's fields (a body's or a query's), taken out of them. */
function takeExpand(fields: Obj): readonly string[] {
  if (!Object.hasOwn(fields, 'expand')) return NO_EXPAND;
  const expand = fields.expand;
  delete fields.expand;
  // `expand[]=a`, `expand[0]=a` (stripe-node's form), `expand=a`.
  const list = Array.isArray(expand) ? expand : isPlainObject(expand) ? Object.values(expand) : [expand];
  return list.filter((e): e is string => typeof e === 'string');
}

/** What a Stripe request asks to expand: `expand` of its body (taken out of `fields`) and of its query; none for other styles. */
export function expandOf(call: Call, fields: Obj | undefined): readonly string[] {
  if (call.resource.style.name !== 'stripe') return NO_EXPAND;
  const body = fields === undefined ? NO_EXPAND : takeExpand(fields);
  if (!call.req.query.includes('expand')) return body;
  const query = takeExpand(parseListQuery(call.req.query));
  return body.length === 0 ? query : [...body, ...query];
}

/** The answer with the object's text, expanded as the request asked. */
export function expandedAnswer(
  status: number,
  text: string,
  call: Call,
  expand: readonly string[],
): MaybePromise<ResourceAnswer> {
  if (expand.length === 0) return jsonAnswer(status, text, call.label);
  return expanded(text, expand, call).then((out) => jsonAnswer(status, out, call.label));
}

/** The object's text with each `expand` field that holds an id replaced by that object (looked up in every collection). */
export async function expanded(text: string, expand: readonly string[], call: Call): Promise<string> {
  if (expand.length === 0) return text;
  const object = JSON.parse(text) as Obj;
  for (const field of expand) {
    const id = object[field];
    if (typeof id !== 'string') continue;
    const found = await call.find(id);
    if (found !== undefined) object[field] = JSON.parse(found);
  }
  return JSON.stringify(object);
}
