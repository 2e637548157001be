/**
 * One request's operation: what it works with ({@link EngineCall}), the operation run, and the
 * objects it wrote named in its answer.
 */
import { runAction } from './action-operation.js';
import type { ResourceAnswer } from './answers.js';
import type { CompiledResource } from './compile.js';
import { createObject } from './create-operation.js';
import type { ResourceEngine } from './engine.js';
import type { Operation, ResourceMatch } from './engine-match.js';
import type { EventSink } from './events.js';
import type { ResourceView } from '../expression/context.js';
import { listObjects } from './list-operation.js';
import { deleteObject, retrieveObject, updateObject, type Call, type ResourceRequest } from './operations.js';
import type { PathMatch } from './paths.js';
import type { CollectionStore, MaybePromise, StoredObject } from './store.js';

/** The operation `call` names, run. */
export function runOperation(call: Call, operation: Operation): MaybePromise<ResourceAnswer> {
  const { resource, match: path } = call;
  switch (operation) {
    case 'create':
      return createObject(call);
    case 'retrieve':
      return retrieveObject(call);
    case 'list':
      return listObjects(call);
    case 'update':
      return updateObject(call, 'merge');
    case 'replace':
      return updateObject(call, 'replace');
    case 'delete':
      return deleteObject(call);
    case 'action':
      return runAction(call, resource.actions.get(path.action as string)!);
  }
}

/**
 * What one operation works with ({@link Call}): a class, so a request makes one object, and its
 * `written` and `find` are methods, not closures made for each request.
 */
export class EngineCall implements Call {
  /** The objects the operation wrote, in order (none: undefined). */
  writes: StoredObject[] | undefined = undefined;
  readonly resource: CompiledResource;
  readonly match: PathMatch;
  readonly label: string;
  readonly route: string;

  constructor(
    private readonly engine: ResourceEngine,
    private readonly matched: ResourceMatch,
    readonly req: ResourceRequest,
    readonly coll: CollectionStore,
    readonly now: number,
    readonly seed: number,
    readonly events: EventSink | undefined,
    readonly view: ResourceView,
    readonly states: Readonly<Record<string, string>>,
    readonly hint: Record<string, unknown> | undefined,
  ) {
    this.resource = matched.resource;
    this.match = matched.path;
    this.label = matched.label;
    this.route = matched.route;
  }

  written(object: StoredObject): MaybePromise<void> {
    if (this.writes === undefined) this.writes = [object];
    else this.writes.push(object);
    return this.engine.written(this.req.scope, this.resource, object, this.matched.operation === 'delete');
  }

  find(id: string): Promise<string | undefined> {
    return this.engine.find(this.req.scope, id);
  }
}

/** The answer, naming the objects its request wrote (their history names the request once it is journaled). */
export function withWrites(answer: ResourceAnswer, call: EngineCall): ResourceAnswer {
  if (call.writes !== undefined) answer.writes = call.writes;
  return answer;
}
