import type { IncomingHttpHeaders } from 'node:http';
import type { AnswerRandom, RequestContext, ResourceView } from '../expression/context.js';
import type { CompiledString } from '../expression/string-template.js';
import { internalize, textOf } from '../expression/values.js';
import { createAnswerRandom } from '../seeded.js';
import { segmentParts, type SegmentPart } from '../route-path.js';
import { decodeComponent as decode, parseCookies, parseQuery } from '../pipeline/request-parts.js';

// Read by answers (request.query, request.cookies) and by validation, as by auth.
export { parseCookies, parseQuery };

/** Reads the `:name` (and trailing `*`) parameters of one route from a request path. */
export type ParamReader = (path: string) => Record<string, string>;

/**
 * Compiles a route path (`/users/:id`, `/files/*`) into a reader of its parameters, decoded as the
 * router decodes them. Route paths have no regex parameters (route-path.ts), so splitting on
 * `/` finds them; a trailing slash of the request is ignored, as the router ignores it.
 */
export function compileParamReader(route: string): ParamReader {
  const segments = route.split('/');
  const named: Array<readonly [number, string]> = [];
  const mixed: Array<readonly [number, RegExp, string[]]> = [];
  segments.forEach((segment, i) => {
    if (/^:[A-Za-z_][A-Za-z0-9_]*$/.test(segment)) named.push([i, internalize(segment.slice(1))]);
    else if (segment.includes(':')) {
      const parts = segmentParts(segment);
      if (typeof parts !== 'string' && parts.some((p) => 'param' in p)) mixed.push([i, ...segmentMatcher(parts)]);
    }
  });
  if (mixed.length > 0) {
    const whole = compileParamReader(segments.map((s, i) => (mixed.some(([at]) => at === i) ? '_' : s)).join('/'));
    return (path) => {
      const params = whole(path);
      const parts = trimSlash(path).split('/');
      for (const [i, regex, names] of mixed) {
        const found = regex.exec(parts[i] ?? '');
        names.forEach((name, k) => (params[name] = decode(found?.[k + 1] ?? '')));
      }
      return params;
    };
  }
  const wildcard = segments[segments.length - 1] === '*' ? segments.length - 1 : -1;
  if (wildcard >= 0) {
    return (path) => {
      const parts = trimSlash(path).split('/');
      const params: Record<string, string> = Object.create(null) as Record<string, string>;
      for (const [i, name] of named) params[name] = decode(parts[i] ?? '');
      params['*'] = decode(parts.slice(wildcard).join('/'));
      return params;
    };
  }
  // Only named segments: walk the path once to each of them instead of splitting all of it.
  return (path) => {
    const trimmed = trimSlash(path);
    const params: Record<string, string> = Object.create(null) as Record<string, string>;
    let index = 0;
    let start = 0;
    for (const [i, name] of named) {
      while (index < i && start !== -1) {
        const slash = trimmed.indexOf('/', start);
        start = slash === -1 ? -1 : slash + 1;
        index++;
      }
      if (start === -1) params[name] = '';
      else {
        const end = trimmed.indexOf('/', start);
        params[name] = decode(end === -1 ? trimmed.slice(start) : trimmed.slice(start, end));
      }
    }
    return params;
  };
}

const escapeRegExp = (text: string): string => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/**
 * A segment that shares parameters with text (`:sid.json`, `:base...:head`) as the regular
 * expression find-my-way matches it with, so that each parameter gets what the router gave it: the
 * first parameter as short as it can be, each later one up to its text's first occurrence.
 */
function segmentMatcher(parts: SegmentPart[]): [RegExp, string[]] {
  let source = '';
  let backtrack = '';
  let first = true;
  const names: string[] = [];
  for (const part of parts) {
    if ('text' in part) {
      backtrack = escapeRegExp(part.text);
      source += backtrack;
    } else {
      names.push(internalize(part.param));
      source += first ? '(.*?)' : `(${backtrack}|(?:(?!${backtrack}).)*)`;
      first = false;
    }
  }
  return [new RegExp(`^${source}$`, 's'), names];
}

/** A trailing slash of the request is ignored, as the router ignores it. */
function trimSlash(path: string): string {
  return path.length > 1 && path.endsWith('/') ? path.slice(0, -1) : path;
}

/** What the handler knows about a request when an answer is chosen; the rest is read on first use. */
export interface RequestFacts {
  readonly url: string;
  readonly mockPath: string;
  readonly headers: IncomingHttpHeaders;
  readonly body: unknown;
  readonly request: number;
  readonly state: Readonly<Record<string, string>>;
  readonly now: number;
  readonly readParams: ParamReader;
  /** Seed, endpoint and `seedBy` of the random source, made on first use (most answers draw nothing). */
  readonly seed: number;
  readonly endpointKey: string;
  readonly seedBy: CompiledString | undefined;
  /** The stored collections (`resources.<name>`), when the server has resources. */
  readonly resources?: ResourceView | undefined;
}

/**
 * The {@link RequestContext} of one request. Params, query, cookies and the random source are
 * worked out the first time an answer reads them, so an answer that reads only `params.id` parses
 * no query string and seeds no generator.
 */
export class LazyRequestContext implements RequestContext {
  readonly headers: IncomingHttpHeaders;
  readonly body: unknown;
  readonly request: number;
  readonly state: Readonly<Record<string, string>>;
  readonly now: number;
  readonly resources: ResourceView | undefined;
  #facts: RequestFacts;
  #params: Record<string, string> | undefined;
  #query: Record<string, string | string[]> | undefined;
  #cookies: Record<string, string> | undefined;
  #random: AnswerRandom | undefined;

  constructor(facts: RequestFacts) {
    this.#facts = facts;
    this.headers = facts.headers;
    this.body = facts.body;
    this.request = facts.request;
    this.state = facts.state;
    this.now = facts.now;
    this.resources = facts.resources;
  }

  get params(): Record<string, string> {
    return (this.#params ??= this.#facts.readParams(this.#facts.mockPath));
  }

  get query(): Record<string, string | string[]> {
    if (this.#query === undefined) {
      const { url } = this.#facts;
      const at = url.indexOf('?');
      const end = url.indexOf('#', at);
      this.#query =
        at === -1
          ? (Object.create(null) as Record<string, string | string[]>)
          : parseQuery(url.slice(at + 1, end === -1 ? undefined : end));
    }
    return this.#query;
  }

  get cookies(): Record<string, string> {
    const header = this.headers.cookie;
    return (this.#cookies ??= parseCookies(Array.isArray(header) ? header.join('; ') : header));
  }

  get random(): AnswerRandom {
    if (this.#random === undefined) {
      const { seed, endpointKey, seedBy } = this.#facts;
      // the n-th request's random values, or those of the seedBy value when it is set.
      this.#random = createAnswerRandom(
        seed,
        endpointKey,
        seedBy === undefined ? this.request : textOf(seedBy.evaluate(this)),
      );
    }
    return this.#random;
  }
}
