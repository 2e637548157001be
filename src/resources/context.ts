import type { IncomingHttpHeaders } from 'node:http';
import type { AnswerRandom, RequestContext, ResourceView } from '../expression/context.js';
import { createAnswerRandom } from '../seeded.js';
import { parseCookies, parseQuery } from '../answer/request-context.js';

/** What a resource's expressions read: the request (when one caused the change), the object, the collections. */
export interface ResourceFacts {
  readonly params: Readonly<Record<string, string>>;
  /** The query string (without `?`). */
  readonly query: string;
  readonly headers: IncomingHttpHeaders;
  readonly body: unknown;
  /** The object's position in its collection (from 1): `request` of an answer. */
  readonly n: number;
  readonly now: number;
  readonly state: Readonly<Record<string, string>>;
  /** Seeds the random source: with the same seed, the n-th object of a collection gets the same values. */
  readonly seed: number;
  readonly randomKey: string;
  readonly resource?: unknown;
  readonly resources?: ResourceView;
}

/** A {@link RequestContext} of a resource's expressions; the query, cookies and random source are made when first read. */
export class ResourceContext implements RequestContext {
  readonly params: Readonly<Record<string, string>>;
  readonly headers: IncomingHttpHeaders;
  readonly body: unknown;
  readonly request: number;
  readonly state: Readonly<Record<string, string>>;
  readonly now: number;
  readonly resource: unknown;
  readonly resources: ResourceView | undefined;
  #facts: ResourceFacts;
  #query: Record<string, string | string[]> | undefined;
  #cookies: Record<string, string> | undefined;
  #random: AnswerRandom | undefined;

  constructor(facts: ResourceFacts, resource: unknown = facts.resource) {
    this.#facts = facts;
    this.params = facts.params;
    this.headers = facts.headers;
    this.body = facts.body;
    this.request = facts.n;
    this.state = facts.state;
    this.now = facts.now;
    this.resource = resource;
    this.resources = facts.resources;
  }

  get query(): Record<string, string | string[]> {
    return (this.#query ??= this.#facts.query === '' ? {} : parseQuery(this.#facts.query));
  }

  get cookies(): Record<string, string> {
    const header = this.headers.cookie;
    return (this.#cookies ??= parseCookies(Array.isArray(header) ? header.join('; ') : header));
  }

  get random(): AnswerRandom {
    return (this.#random ??= createAnswerRandom(this.#facts.seed, this.#facts.randomKey, this.#facts.n));
  }

  /** The same request, collections and random source (its draws go on), reading another object. */
  with(resource: unknown): ResourceContext {
    const ctx = new ResourceContext(this.#facts, resource);
    ctx.#random = this.random;
    return ctx;
  }
}
