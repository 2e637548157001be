import type { IncomingHttpHeaders } from 'node:http';
import type { ResourceView } from '../expression/context.js';
import { NO_HEADERS, jsonAnswer, notFoundAnswer, styleAnswer, type ResourceAnswer } from './answers.js';
import type { CompiledAction, CompiledResource } from './compile.js';
import { ResourceContext } from './context.js';
import { sendEvents, type EventSink } from './events.js';
import { readOwn } from '../expression/values.js';
import { BadInput, readBody, typeForm, type ReadBody } from './form.js';
import { parseListQuery } from './list.js';
import { changedFields, isPlainObject, layHints, mergeFields, mergeFieldsAfterId, mergeFieldsInto } from './merge.js';
import type { PathMatch } from './paths.js';
import { after, type CollectionStore, type HistoryEntry, type MaybePromise, type StoredObject } from './store.js';

/**
 * The operations of a collection: create, retrieve, update (merge or replace), delete, list and
 * actions, each answering in the collection's style. A write reads the object, changes it and
 * writes it back naming the version it read; when another write came first (another worker),
 * it reads again and retries.
 */

type Obj = Record<string, unknown>;

/** A request as a resource reads it. */
export interface ResourceRequest {
  readonly method: string;
  /** The path after the base path, without the query. */
  readonly path: string;
  /** The query string, without `?`. */
  readonly query: string;
  readonly headers: IncomingHttpHeaders;
  readonly body: Buffer | undefined;
  /** The session it belongs to (`''`: the default one). */
  readonly scope: string;
  /** `http://host:port` as the client reached the server (Location, Link). */
  readonly origin: string;
  /** The base path (`/mock`, `/v1`, or `` for `/`). */
  readonly basePath: string;
  /** Its journal id, for the objects' history. */
  readonly request?: number;
}

/** What one operation works with. */
export interface Call {
  readonly resource: CompiledResource;
  readonly match: PathMatch;
  readonly req: ResourceRequest;
  readonly coll: CollectionStore;
  readonly now: number;
  readonly seed: number;
  readonly events: EventSink | undefined;
  readonly view: ResourceView;
  readonly states: Readonly<Record<string, string>>;
  /** The journal's label: `customers.retrieve`. */
  readonly label: string;
  /** The operation's route, for events' delivery log: `POST /v1/customers/:id/confirm`. */
  readonly route: string;
  /** The types the OpenAPI description gives the operation's body (`openapi.spec`), over the defaults'. */
  readonly hint: Record<string, unknown> | undefined;
  /** Told of every write (caches, the lifecycle's schedule). */
  written(object: StoredObject): MaybePromise<void>;
  /** An object of any collection of the request's scope with this id, as text (Stripe's `expand`). */
  find(id: string): Promise<string | undefined>;
}

/** How many times a write is tried again when another write keeps coming first. */
const WRITE_TRIES = 8;

function contextOf(call: Call, body: unknown, n: number, resource?: unknown): ResourceContext {
  const { req, match } = call;
  return new ResourceContext({
    params: match.id === undefined ? match.params : { ...match.params, id: match.id },
    query: req.query,
    headers: req.headers,
    body,
    n,
    now: call.now,
    state: call.states,
    seed: call.seed,
    randomKey: call.resource.randomKey,
    resource,
    resources: call.view,
  });
}

function bad(call: Call, err: unknown): ResourceAnswer {
  if (err instanceof BadInput)
    return { ...styleAnswer(call.resource.style.invalid(err.message, err.param), call.label), invalid: true };
  throw err;
}

function missing(call: Call): ResourceAnswer {
  return notFoundAnswer(
    call.resource,
    { id: call.match.id ?? '', method: call.req.method, path: call.req.path, now: call.now },
    call.label,
  );
}

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
function expandOf(call: Call, fields: Obj | undefined): readonly string[] {
  if (call.resource.style.name !== 'stripe') return NO_EXPAND;
  const body = fields === undefined ? NO_EXPAND : takeExpand(fields);
  if (!call.req.query.includes('expand')) return body;
  const query = takeExpand(parseListQuery(call.req.query));
  return body.length === 0 ? query : [...body, ...query];
}

/** The answer with the object's text, expanded as the request asked. */
function expandedAnswer(
  status: number,
  text: string,
  call: Call,
  expand: readonly string[],
): MaybePromise<ResourceAnswer> {
  if (expand.length === 0) return jsonAnswer(status, text, call.label);
  return expanded(text, expand, call).then((out) => jsonAnswer(status, out, call.label));
}

/** The object's text with each `expand` field that holds an id replaced by that object (looked up in every collection). */
async function expanded(text: string, expand: readonly string[], call: Call): Promise<string> {
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

function readFields(call: Call): ReadBody {
  return readBody(call.req.body, headerText(call.req.headers['content-type']), call.resource.style.jsonOnly);
}

const headerText = (value: string | string[] | undefined): string | undefined =>
  Array.isArray(value) ? value[0] : value;

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

/** The object the path names, in the part of the collection the path names. */
function named(call: Call): MaybePromise<StoredObject | undefined> {
  return after(call.coll.get(call.match.id ?? ''), (found) =>
    found !== undefined && found.parent === call.match.parent ? found : undefined,
  );
}

/** `GET <path>/:id`. */
export function retrieveObject(call: Call): MaybePromise<ResourceAnswer> {
  return after(named(call), (found) => {
    if (found === undefined) return missing(call);
    return expandedAnswer(200, found.text, call, expandOf(call, undefined));
  });
}

/**
 * Reads the object, makes its new fields with `change` and writes them naming the version read,
 * again when another write came first. `change` returns the new object, or an answer to give instead.
 */
export async function writeObject(
  call: Call,
  change: (
    object: Obj,
    stored: StoredObject,
  ) => { object: Obj; detail?: string; kind: HistoryEntry['kind'] } | ResourceAnswer,
): Promise<{ stored: StoredObject; object: Obj; before: Obj } | ResourceAnswer> {
  for (let attempt = 0; attempt < WRITE_TRIES; attempt++) {
    const found = await named(call);
    if (found === undefined) return missing(call);
    const before = JSON.parse(found.text) as Obj;
    const changed = change(before, found);
    if ('status' in changed && 'label' in changed) return changed as ResourceAnswer;
    const made = changed as { object: Obj; detail?: string; kind: HistoryEntry['kind'] };
    const statusMoved = call.resource.statusFields.some((field) => made.object[field] !== before[field]);
    const history: HistoryEntry = {
      at: call.now,
      kind: made.kind,
      ...(made.detail === undefined ? {} : { detail: made.detail }),
      ...(call.req.request === undefined ? {} : { request: call.req.request }),
    };
    const written = await call.coll.replace(
      found.id,
      found.version,
      JSON.stringify(made.object),
      statusMoved ? call.now : found.since,
      history,
    );
    if (written === undefined) return missing(call);
    if (written === 'conflict') continue;
    await call.written(written);
    return { stored: written, object: made.object, before };
  }
  return styleAnswer(
    call.resource.style.invalid('The object was changed by other requests meanwhile; try again', null),
    call.label,
  );
}

/** The fields an update or an action sends (not `id`; Stripe's `expand` taken off into `expand`), or the 400 of a body that cannot be read. */
function changeFields(call: Call): { fields: Obj; form: boolean; expand: readonly string[] } | ResourceAnswer {
  let read;
  try {
    read = readFields(call);
  } catch (err) {
    return bad(call, err);
  }
  const expand = expandOf(call, read.fields);
  delete read.fields.id;
  return { ...read, expand };
}

/**
 * A form body's fields typed as the collection's defaults have them, the OpenAPI hints over those,
 * and as the stored object has them where neither gives a type (a field without a default, or a
 * null one); a JSON body's as sent.
 */
function typedFields(
  call: Call,
  read: { fields: Obj; form: boolean },
  object: Obj,
  stored: StoredObject,
): { typed: Obj } | ResourceAnswer {
  if (!read.form) return { typed: read.fields };
  const id = typeof object.id === 'number' ? object.id : stored.id;
  const types = layHints(object, call.resource.defaults(contextOf(call, read.fields, stored.seq), id));
  try {
    return { typed: typeForm(read.fields, call.hint === undefined ? types : layHints(types, call.hint), '') as Obj };
  } catch (err) {
    return bad(call, err);
  }
}

/** `POST` (stripe, openai) or `PATCH` (github, rest) `<path>/:id` merges; `PUT` replaces. */
export async function updateObject(call: Call, how: 'merge' | 'replace'): Promise<ResourceAnswer> {
  const read = changeFields(call);
  if ('label' in read) return read;
  const result = await writeObject(call, (object, stored) => {
    const made = typedFields(call, read, object, stored);
    if (!('typed' in made)) return made;
    const fields = made.typed;
    const next = how === 'merge' ? mergeFields(object, fields) : { id: object.id, ...fields };
    next.id = object.id;
    return { object: next, kind: how === 'merge' ? 'updated' : 'replaced', detail: changedFields(fields).join(', ') };
  });
  if ('label' in result) return result;
  return expandedAnswer(200, result.stored.text, call, read.expand);
}

/** `DELETE <path>/:id`. */
export async function deleteObject(call: Call): Promise<ResourceAnswer> {
  const found = await named(call);
  if (found === undefined) return missing(call);
  const gone = await call.coll.delete(found.id);
  if (gone === undefined) return missing(call);
  await call.written(gone);
  const object = JSON.parse(gone.text) as Obj;
  const id = typeof object.id === 'string' || typeof object.id === 'number' ? String(object.id) : gone.id;
  const answer = call.resource.style.deleted(
    id,
    typeof object.object === 'string' ? object.object : call.resource.label,
  );
  return jsonAnswer(answer.status, answer.body, call.label);
}

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
