import type { DelayShape } from './units.js';

/** A signing scheme of a webhook target. */
export type SignScheme = 'stripe' | 'standard' | 'github' | 'hmac' | 'none';
/** How an event's data is wrapped. */
export type Envelope = 'stripe' | 'standard' | 'github' | 'none';

/** `sign:` of a target, defaults applied; `secret` is the raw text (it may hold `${env.MOCKAPI_*}`). */
export interface SignConfig {
  scheme: SignScheme;
  secret: string;
  /** `hmac` only. */
  header: string;
  algorithm: 'sha256' | 'sha1' | 'sha512';
  encoding: 'hex' | 'base64';
  template: string;
  prefix: string;
}

/** Seeded misbehaviour of a target: a probability 0–1 each. */
export interface ChaosConfig {
  duplicate: number;
  reorder: number;
  badSignature: number;
  staleTimestamp: number;
}

/** One receiver of events. */
export interface WebhookTargetConfig {
  /** As written (may hold `${env.MOCKAPI_*}`). */
  url: string;
  sign: SignConfig;
  /** Waits after each failed attempt, in ms; empty = no retry. */
  scheduleMs: number[];
  timeoutMs: number;
  chaos: ChaosConfig;
  disabled: boolean;
}

/** One event template. */
export interface WebhookEventConfig {
  envelope: Envelope;
  data?: unknown;
}

/** `webhooks:`, defaults applied. */
export interface WebhooksConfig {
  targets: Record<string, WebhookTargetConfig>;
  events: Record<string, WebhookEventConfig>;
}

/** One item of a leaf's `send`. */
export interface SendConfig {
  event: string;
  to: string;
  url?: string;
  /** Fixed wait after the answer, or a shape drawn per send. */
  afterMs: number;
  afterShape?: DelayShape;
  data?: unknown;
}
