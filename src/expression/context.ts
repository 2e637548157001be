import type { AnswerRandom } from '../seeded.js';

export type { AnswerRandom };

/**
 * What a compiled answer reads when it runs: the request, its position in the endpoint's stream,
 * scenario states, the server's clock and the seeded random source. Built once per request by the
 * handler; compiled expressions and matchers only read it.
 */
export interface RequestContext {
  /** Path parameters of the matched route (`/users/:id` → `{ id: "42" }`), already decoded. */
  readonly params: Readonly<Record<string, string>>;
  /** Query parameters; a name given several times (`?tag=a&tag=b`) holds the list of its values. */
  readonly query: Readonly<Record<string, string | readonly string[]>>;
  /**
   * Request headers by **lower-case** name, as node:http gives them; expressions and matchers
   * lower-case the names they ask for, so `headers.X-Request-Id` reads `x-request-id`.
   */
  readonly headers: Readonly<Record<string, string | readonly string[] | undefined>>;
  /** Cookies of the `Cookie` header by name (first value wins), already decoded. */
  readonly cookies: Readonly<Record<string, string>>;
  /** The body: the parsed value when it was JSON, else the text; `undefined` when empty. */
  readonly body: unknown;
  /** This is the n-th request to reach the endpoint, from 1 (simulated failures included). */
  readonly request: number;
  /** Current state of every scenario, by scenario name. */
  readonly state: Readonly<Record<string, string>>;
  /** The server's clock (virtual or real), in milliseconds since the epoch; `now` reads it as ISO text. */
  readonly now: number;
  /**
   * The random source of this answer (see `createAnswerRandom`). Give every request its own: the
   * faker instance is re-seeded whenever a compiled template sees a source it has not seen last.
   */
  readonly random: AnswerRandom;
  /** The request's violations of the OpenAPI description: read only by `openapi.validate.answer`. */
  readonly violations?: readonly unknown[];
  /** The object a resource's operation acts on (`resource`): in its `fields`, `set`, `send` and errors. */
  readonly resource?: unknown;
  /** The stored collections (`resources.<name>`), when the server has resources. */
  readonly resources?: ResourceView;
}

/** What `resources.<name>` reads: a collection's objects, oldest first. */
export interface ResourceView {
  /** The objects of the collection named so (undefined when there is none). */
  collection(name: string): readonly unknown[] | undefined;
}

/** Where a problem is: keys and list indexes from the compiled value, as `src/config/field-path.ts`. */
export type IssuePath = ReadonlyArray<string | number>;

/** One problem found while compiling part of an answer. Never thrown: returned as a value. */
export interface AnswerIssue {
  /** Field path from the value given to the compiler, e.g. `['when', 'params.id', 'matches']`. */
  readonly path: IssuePath;
  /** What is wrong, in words for the config's author (no field name in front). */
  readonly message: string;
  /** 0-based character offset within the string at `path`, when the problem is inside an expression. */
  readonly offset?: number;
}

/** The outcome of a compile step: the compiled value, or every problem found. */
export type Compiled<T> =
  { readonly ok: true; readonly value: T } | { readonly ok: false; readonly issues: readonly AnswerIssue[] };
