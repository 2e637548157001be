/**
 * `POST <path>/:id/<action>`: an action's `when`, its changes and the events it sends, and the
 * style's refusal when `when` does not hold.
 */
import { readOwn } from '../expression/values.js';
import { NO_HEADERS, jsonAnswer, styleAnswer, type ResourceAnswer } from './answers.js';
import type { CompiledAction } from './compile.js';
import { sendEvents } from './events.js';
import { expanded } from './expand.js';
import { isPlainObject, mergeFields } from './merge.js';
import { changeFields, contextOf, typedFields, writeObject, type Call } from './operations.js';

type Obj = Record<string, unknown>;

/** `POST <path>/:id/<action>`: `when` must hold; then the request's fields and `set`, and `send`. */
export async function runAction(call: Call, action: CompiledAction): Promise<ResourceAnswer> {
  const read = changeFields(call);
  if ('label' in read) return read;
  const result = await writeObject(call, (object, stored) => {
    if (action.when !== undefined && !action.when(object)) return refused(call, action, object);
    const made = typedFields(call, read, object, stored);
    if (!('typed' in made)) return made;
    const fields = made.typed;
    let next = mergeFields(object, fields);
    if (action.set !== undefined) {
      const set = action.set.evaluate(contextOf(call, read.fields, stored.seq, object));
      if (isPlainObject(set)) next = mergeFields(next, set);
    }
    next.id = object.id;
    return { object: next, kind: 'action', detail: action.name };
  });
  if ('label' in result) return result;
  const notes = sendEvents(
    call.events,
    action.send,
    result.object,
    contextOf(call, read.fields, result.stored.seq, result.object),
    call.resource.style.envelope,
    call.route,
    call.req.scope,
  );
  if (read.expand.length === 0) return jsonAnswer(200, result.stored.text, call.label, NO_HEADERS, notes);
  const text = await expanded(result.stored.text, read.expand, call);
  return jsonAnswer(200, text, call.label, NO_HEADERS, notes);
}

/**
 * The style's refusal of an action whose `when` does not hold, naming the field that fails (`status`
 * when it does, in Stripe's words), its value, and the values it accepts.
 */
function refused(call: Call, action: CompiledAction, object: Obj): ResourceAnswer {
  const { resource } = call;
  const fields = action.whenFields ?? [];
  const failed = fields.find((field) => !field.test(object)) ?? fields[0];
  const name = failed?.field ?? 'status';
  const value = valueAt(object, name);
  const shown = typeof value === 'string' ? value : JSON.stringify(value ?? null);
  const plural = name === 'status' ? 'statuses' : `${name} values`;
  const only =
    failed?.accepted === undefined
      ? ''
      : ` Only ${article(resource.label)} ${resource.label} with one of the following ${plural} may be used with ${action.name}: ${failed.accepted.map(String).join(', ')}.`;
  const message = `You cannot ${action.name} this ${resource.label} because it has a ${name} of ${shown}.${only}`;
  return styleAnswer(resource.style.unexpectedState(`${resource.label}_unexpected_state`, message), call.label);
}

/** `a` or `an`, by the word's first letter (`an issue`, `a payment_intent`). */
const article = (word: string): string => (/^[aeiou]/i.test(word) ? 'an' : 'a');

/** The value at a field's path (`metadata.plan`), own properties only. */
function valueAt(object: Obj, path: string): unknown {
  let found: unknown = object;
  for (const step of path.split('.')) found = readOwn(found, step);
  return found;
}
