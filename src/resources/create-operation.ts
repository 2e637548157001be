/**
 * `POST <path>`: a new object from the collection's defaults and the request's fields, its id
 * drawn again when taken; the object's JSON text with its id first ({@link objectText}).
 */
import { NO_HEADERS, jsonAnswer, styleAnswer, type ResourceAnswer } from './answers.js';
import { expandOf, expanded } from './expand.js';
import { BadInput, typeForm, type ReadBody } from './form.js';
import { layHints, mergeFields, mergeFieldsAfterId, mergeFieldsInto } from './merge.js';
import { WRITE_TRIES, bad, contextOf, readFields, type Call } from './operations.js';
import type { HistoryEntry, MaybePromise, StoredObject } from './store.js';

type Obj = Record<string, unknown>;

/** `POST <path>`: a new object from the defaults and the request's fields. */
export function createObject(call: Call): MaybePromise<ResourceAnswer> {
  let read;
  try {
    read = readFields(call);
  } catch (err) {
    return bad(call, err);
  }
  // (rest takes the client's id: an empty one names an object no path can reach)
  if (call.resource.style.name === 'rest' && read.fields.id === '')
    return bad(call, new BadInput('id must not be empty', 'id'));
  return createAttempt({ call, read, expand: expandOf(call, read.fields) }, 0);
}

/** What every try of one create works with: the call, the fields read and Stripe's expand. */
interface CreateWork {
  readonly call: Call;
  readonly read: ReadBody;
  readonly expand: readonly string[];
}

/**
 * One try at a new object. Its number `n` seeds its default id (the n-th object of a collection gets
 * the same id in every run): the collection's last seq + 1. A default id drawn twice (or a number
 * another worker took) draws again: in memory with the next number; in a shared store, where
 * creates run side by side and all read the same last seq, with a number the store gives this try
 * alone ({@link CollectionStore.ticket}), so that many creates at once each find a free id.
 */
function createAttempt(work: CreateWork, attempt: number): MaybePromise<ResourceAnswer> {
  const { coll } = work.call;
  // (no closure when the store answers at once, as memory does: a create is the step's hot path)
  if (attempt > 0 && coll.ticket !== undefined)
    return Promise.resolve(coll.ticket()).then((n) => createNumbered(work, attempt, n));
  const last = coll.lastSeq();
  return last instanceof Promise
    ? last.then((seq) => createNumbered(work, attempt, seq + 1 + attempt))
    : createNumbered(work, attempt, last + 1 + attempt);
}

/** A try at a new object numbered `n`. */
function createNumbered(work: CreateWork, attempt: number, n: number): MaybePromise<ResourceAnswer> {
  const { call, read } = work;
  const { resource, req, match, coll } = call;
  const asked = read.fields.id;
  const given =
    resource.style.name === 'rest' && (typeof asked === 'string' || Number.isSafeInteger(asked))
      ? (asked as string | number)
      : undefined;
  let id: string | number;
  let defaults: Obj;
  const { plain } = resource;
  if (plain !== undefined) {
    // (neither reads the request: no context to make)
    id = given ?? plain.id(call.seed, n);
    defaults = plain.defaults;
  } else {
    const ctx = contextOf(call, read.fields, n);
    id = given ?? resource.makeId(ctx, n);
    // `fields` read the new object's id as `resource.id`.
    defaults = resource.defaults(ctx, id);
  }
  let fields: Obj;
  try {
    fields = read.form
      ? (typeForm(read.fields, call.hint === undefined ? defaults : layHints(defaults, call.hint), '') as Obj)
      : read.fields;
  } catch (err) {
    return bad(call, err);
  }
  // (the fields read stay as sent: another attempt and the expressions read them; merging copies)
  if (Object.hasOwn(fields, 'id')) {
    fields = { ...fields };
    delete fields.id;
  }
  const text = createdText(id, defaults, fields, plain?.base);
  const history: HistoryEntry =
    req.request === undefined
      ? { at: call.now, kind: 'created' }
      : { at: call.now, kind: 'created', request: req.request };
  const created = coll.create(
    { id: String(id), text, parent: match.parent, since: call.now, created: call.now },
    history,
  );
  return created instanceof Promise
    ? created.then((object) => afterCreate(work, attempt, id, given, object))
    : afterCreate(work, attempt, id, given, created);
}

/** The answer to a create once the store wrote it (or found its id taken). */
function afterCreate(
  work: CreateWork,
  attempt: number,
  id: string | number,
  given: string | number | undefined,
  created: StoredObject | undefined,
): MaybePromise<ResourceAnswer> {
  const { call, expand } = work;
  const { resource, req } = call;
  if (created === undefined) {
    if (given !== undefined || resource.config.id !== undefined || attempt + 1 === WRITE_TRIES)
      return styleAnswer(resource.style.taken(resource.label, String(id)), call.label);
    return createAttempt(work, attempt + 1);
  }
  const location = resource.style.location
    ? ['location', `${req.origin}${req.basePath}${req.path.replace(/\/$/, '')}/${encodeURIComponent(String(id))}`]
    : NO_HEADERS;
  const written = call.written(created);
  if (expand.length === 0) {
    const answer = jsonAnswer(resource.style.createStatus, created.text, call.label, location);
    return written instanceof Promise ? written.then(() => answer) : answer;
  }
  return Promise.resolve(written)
    .then(() => expanded(created.text, expand, call))
    .then((text) => jsonAnswer(resource.style.createStatus, text, call.label, location));
}

/**
 * An object's JSON text with its id first, as the APIs write them: one flat string, the text a
 * collection keeps (the fields' text sliced and joined after the id would keep a rope of three
 * strings per object). A field named like an array index would be written before `id` by
 * JSON.stringify, so such fields take the joined path.
 */
export function objectText(id: string | number, fields: Obj): string {
  if (!hasIndexKey(fields)) return JSON.stringify({ id, ...fields }); // (spread defines keys: an own `__proto__` stays a field)
  const rest = JSON.stringify(fields);
  return `{"id":${JSON.stringify(id)}${rest.length > 2 ? `,${rest.slice(1)}` : '}'}`;
}

/**
 * A new object's text: `defaults` with `fields` merged in (neither changed, `fields` without an
 * id), written by {@link objectText}. Made as one object with the id in front and written as it is
 * (no copy to put the id first) unless a field of either would come before the id (an array
 * index) or the defaults have an `id` of their own (dropped).
 */
function createdText(id: string | number, defaults: Obj, fields: Obj, base: Obj | undefined): string {
  if (!hasIndexKey(fields)) {
    if (base !== undefined) {
      // The collection's `{ id, ...defaults }` copied (V8 copies an object of one shape in one
      // step, where `{ id, ...defaults }` adds each key in turn), and this object's id set.
      const copy = { ...base };
      copy.id = id;
      return JSON.stringify(mergeFieldsInto(copy, fields));
    }
    if (!Object.hasOwn(defaults, 'id') && !hasIndexKey(defaults))
      return JSON.stringify(mergeFieldsAfterId(id, defaults, fields));
  }
  const merged = mergeFields(defaults, fields);
  if (Object.hasOwn(merged, 'id')) delete merged.id;
  return objectText(id, merged);
}

/** Whether an own key of `fields` is an array index (`0`, `42`): V8 lists those first, so checking the first key is enough. */
function hasIndexKey(fields: Obj): boolean {
  for (const key in fields) {
    const first = key.charCodeAt(0);
    return first >= 0x30 && first <= 0x39 && /^(?:0|[1-9]\d{0,9})$/.test(key) && Number(key) < 4294967295;
  }
  return false;
}
