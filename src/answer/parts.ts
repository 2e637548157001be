import type { Config } from '../config/types.js';
import type { StreamConfig } from '../config/stream-model.js';
import type { SendConfig, WebhooksConfig } from '../config/types-webhooks.js';
import type { ExpressionOptions } from '../expression/compile.js';

/**
 * The compiled parts of a config that a capability owns: a leaf's `send:` and `stream:`, an
 * endpoint's request validation, the config's `webhooks:`. The answer compiler and the request path
 * carry them without naming the capability that made them: each capability types its field in its
 * own folder by declaration merging —
 *
 *     declare module '../answer/parts.js' {
 *       interface LeafParts { readonly stream?: StreamPlan }
 *     }
 *
 * — and hands its compile step to the compiler through {@link AnswerParts}, listed once in
 * src/answer-parts.ts beside the composition root. See docs/internals/architecture.md, "Where a new
 * capability goes".
 */

/** What capabilities compile into a leaf (src/webhooks/compile.ts: `send`; src/stream/compile.ts: `stream`). */
export interface LeafParts {}

/** What capabilities compile into an endpoint (src/validate/step.ts: `validation`). */
export interface EndpointParts {}

/** What capabilities compile into the config (src/webhooks/compile.ts: `webhooks`). */
export interface ConfigParts {}

/**
 * The field `K` of `P` as its capability declares it, or `never` where that declaration is not in
 * the program. This file names no field a capability merges in, so its declarations check on their
 * own: a project that reads the package's types (dist/*.d.ts, with `skipLibCheck: false`) reaches
 * this file through the public types without reaching every capability's compile step.
 */
export type Part<P, K extends PropertyKey> = K extends keyof P ? NonNullable<P[K]> : never;

/** What a capability's plan of `openapi:` gives the compiler: each endpoint's part, and the description's stamp. */
export interface ValidationParts {
  /** The description file's stamp when the plan was made: a reload with another reads it again. */
  readonly stamp: string;
  /** By endpoint index; undefined where an endpoint is not validated. */
  readonly endpoints: ReadonlyArray<Part<EndpointParts, 'validation'> | undefined>;
}

/**
 * The capabilities' compile steps, one per config field a capability owns, called once per load
 * (never per request). Made once, in src/answer-parts.ts.
 */
export interface AnswerParts {
  /** A leaf's `send:`: the webhook events sent once the answer is sent. */
  sends(sends: readonly SendConfig[], options: ExpressionOptions): Part<LeafParts, 'send'>;
  /** A leaf's `stream:`: its events, written over time. */
  stream(stream: StreamConfig, options: ExpressionOptions): Part<LeafParts, 'stream'>;
  /** The config's `webhooks:`, URLs and secrets resolved (the secrets go to the redactor); undefined without it. */
  webhooks(webhooks: WebhooksConfig | undefined, options: ExpressionOptions): Part<ConfigParts, 'webhooks'> | undefined;
  /**
   * How each endpoint's requests are validated against `openapi.spec`; called only for a config
   * with `openapi:`. `read`: the description is read `now` (rejects when it cannot be used) or
   * when first wanted (`later`).
   */
  validation(config: Config, read: 'now' | 'later' | undefined): Promise<ValidationParts | undefined>;
}
