import type { IncomingHttpHeaders } from 'node:http';
import type { ResourceView } from '../expression/context.js';
import { jsonAnswer, notFoundAnswer, styleAnswer, type ResourceAnswer } from './answers.js';
import type { CompiledResource } from './compile.js';
import { ResourceContext } from './context.js';
import type { EventSink } from './events.js';
import { expandOf, expandedAnswer } from './expand.js';
import { BadInput, readBody, typeForm, type ReadBody } from './form.js';
import { changedFields, layHints, mergeFields } from './merge.js';
import type { PathMatch } from './paths.js';
import { after, type CollectionStore, type HistoryEntry, type MaybePromise, type StoredObject } from './store.js';

/**
 * The operations of a collection: create, retrieve, update (merge or replace), delete, list and
 * actions, each answering in the collection's style. A write reads the object, changes it and
 * writes it back naming the version it read; when another write came first (another worker),
 * it reads again and retries. Here: what every operation works with, retrieve, update and delete;
 * create in create-operation.ts, actions in action-operation.ts, list in list-operation.ts, Stripe's
 * `expand` in expand.ts.
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
export const WRITE_TRIES = 8;

export function contextOf(call: Call, body: unknown, n: number, resource?: unknown): ResourceContext {
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

export function bad(call: Call, err: unknown): ResourceAnswer {
  if (err instanceof BadInput)
    return { ...styleAnswer(call.resource.style.invalid(err.message, err.param), call.label), invalid: true };
  throw err;
}

export function missing(call: Call): ResourceAnswer {
  return notFoundAnswer(
    call.resource,
    { id: call.match.id ?? '', method: call.req.method, path: call.req.path, now: call.now },
    call.label,
  );
}

export function readFields(call: Call): ReadBody {
  return readBody(call.req.body, headerText(call.req.headers['content-type']), call.resource.style.jsonOnly);
}

const headerText = (value: string | string[] | undefined): string | undefined =>
  Array.isArray(value) ? value[0] : value;
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
export function changeFields(call: Call): { fields: Obj; form: boolean; expand: readonly string[] } | ResourceAnswer {
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
export function typedFields(
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
