/**
 * What compiling an expression works with: the options that say what a place in the config may
 * read ({@link ExpressionOptions}), what compiling found out ({@link ExpressionTraits}), the
 * closure it makes ({@link Evaluate}) and the error that refuses an expression
 * ({@link ExpressionError}). Kept apart from the compiler so that its parts (compile-names.ts,
 * compile-calls.ts) import them without importing the compiler; compile.ts re-exports them.
 */
import type { Node } from './ast.js';
import type { RequestContext } from './context.js';

/** A compiled expression: reads the request (and `index` inside a `$repeat` item), never throws. */
export type Evaluate = (ctx: RequestContext, index: number | undefined) => unknown;

/** Compiles a sub-expression (the object a member is read from, a call's argument) with the same options and traits. */
export type SubCompile = (node: Node) => Evaluate;

/** What the compiler needs to know beyond the expression itself. */
export interface ExpressionOptions {
  /** Environment to read `env.MOCKAPI_*` from, once, at compile time (pass `process.env`). Default: none. */
  readonly env?: Readonly<Record<string, string | undefined>>;
  /** Declared scenarios; when given, `state.<name>` must name one of them. */
  readonly scenarios?: readonly string[];
  /** The `:name` parameters of the endpoint's path; when given, `params.<name>` must name one of them. */
  readonly params?: readonly string[];
  /** Whether `index` may be read (inside a `$repeat` item). */
  readonly allowIndex?: boolean;
  /** Whether `response` (the answer just sent: `{ status, body }`) may be read: in a webhook's `send`. */
  readonly allowResponse?: boolean;
  /** Whether `violations` may be read (the answer to a request that breaks the OpenAPI description). */
  readonly allowViolations?: boolean;
  /** Whether `error` and `key` may be read (in an `errors:` template; see src/http/error-answers.ts). */
  readonly errorSources?: boolean;
  /** False where the request's number is not known (a `cost`, asked at admission): `request` is refused. */
  readonly requestNumber?: boolean;
  /** Whether `resource` (the object a resource's operation acts on) may be read: in a resource's `fields`, `set`, `send`. */
  readonly allowResource?: boolean;
  /** The names of the configured resources; when given, `resources.<name>` must name one of them. */
  readonly resources?: readonly string[];
  /** Sources this place cannot read, each with why (`server.headers` has no `params` or `body`). */
  readonly unavailable?: Readonly<Record<string, string>>;
}

/** What compiling found out about an expression, beside its closure. */
export interface ExpressionTraits {
  /** It calls `fake.*`: faker must be loaded (`loadFaker()`) before it runs. */
  usesFaker: boolean;
  /** It draws from the random source (`uuid`, `randomInt`, `fake.*`). */
  usesRandom: boolean;
}

/** A refused expression: why, and at which offset of the whole string. */
export class ExpressionError extends Error {
  constructor(
    message: string,
    readonly offset: number,
  ) {
    super(message);
  }
}
