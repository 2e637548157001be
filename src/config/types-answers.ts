/**
 * The loaded config's answers: a leaf answer ({@link ResponseConfig}) with its network faults,
 * and the lists (`responses`, `sequence`, `pick`) that choose one. Part of the config's types;
 * types.ts re-exports them.
 */
import type { SendConfig } from './types-webhooks.js';
import type { StreamConfig } from './stream-model.js';

/** A leaf answer: what an endpoint answers with, after defaults are applied. */
export interface ResponseConfig {
  /** The status; 200 when `statusExpression` gives it. */
  status: number;
  /** `${…}` text of a status computed per request, when the status is not a number. */
  statusExpression?: string;
  /** Values may hold `${…}` expressions. */
  headers: Record<string, string>;
  /** Any YAML value (sent as JSON) or a string (sent as text). Absent = empty body. Strings may hold `${…}`. */
  body?: unknown;
  /** Absolute path of the body file (resolved against the config file's folder). */
  bodyFile?: string;
  /** The answer's name (journal, logs), when given. */
  name?: string;
  /** Milliseconds this answer adds to the endpoint's delay. */
  delayMs?: number;
  /** Scenario states set when this answer answers. */
  setState?: Record<string, string>;
  /** Network faults of requests this answer answers. */
  faults?: FaultConfig[];
  /** Webhook events this answer sends once answered. */
  send?: SendConfig[];
  /** A streamed answer (server-sent events, NDJSON, chunks) in place of `body`. */
  stream?: StreamConfig;
}

/** The network fault kinds an endpoint or answer may configure (`faults`). */
export type FaultKind = 'reset' | 'close' | 'hang' | 'slow' | 'truncate';

/** One configured fault, defaults applied. */
export interface FaultConfig {
  kind: FaultKind;
  /** Probability 0–1. */
  rate: number;
  /** `hang`: milliseconds until the connection is closed. */
  afterMs: number;
  /** `slow`: how fast the answer is sent. */
  bytesPerSecond: number;
  /** `truncate`: body bytes sent before closing; undefined = half the body. */
  bytes?: number;
}

/** The selectors of dynamic answers: how a list of answers chooses one. */
export type AnswerKind = 'responses' | 'sequence' | 'pick';

/** What an item of a `responses`, `sequence` or `pick` list may carry besides its answer. */
export interface AnswerItemFields {
  /** On a `responses` item: the raw `when` map (compiled by src/answer). */
  when?: Record<string, unknown>;
  /** On a `sequence` step: requests it answers (default 1). */
  times: number;
  /** On a `pick` item: relative chance (default 1). */
  weight: number;
}

/** A list of answers and how one is chosen. */
export interface AnswerList {
  kind: AnswerKind;
  /** `sequence` only: start over after the last step. */
  loop: boolean;
  items: AnswerItem[];
}

/** One item of an answer list: a leaf, or a nested list. */
export type AnswerItem = AnswerItemFields &
  ({ leaf: ResponseConfig; list?: undefined; name?: string } | { leaf?: undefined; list: AnswerList; name?: string });
