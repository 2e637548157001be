import type { Envelope } from '../config/types-webhooks.js';
import { createDrawStreams, type DrawStreams } from '../pipeline/failure.js';
import type { ChaosConfig } from '../config/types-webhooks.js';
import { idPrefix } from './envelope.js';

/** The chaos a delivery was drawn: each kind on or off. */
export interface ChaosFlags {
  readonly duplicate: boolean;
  readonly reorder: boolean;
  readonly badSignature: boolean;
  readonly staleTimestamp: boolean;
}

/** Two hex digits per byte: an id's words without number-to-text conversions. */
const HEX = Array.from({ length: 256 }, (_, i) => i.toString(16).padStart(2, '0'));
const KINDS = ['duplicate', 'reorder', 'badSignature', 'staleTimestamp'] as const;
const NO_CHAOS: ChaosConfig = { duplicate: 0, reorder: 0, badSignature: 0, staleTimestamp: 0 };

/** Seeded event ids and chaos for deliveries. */
export interface WebhookDraws {
  /** A new event id as the envelope's service writes them (`evt_…`, `msg_…`, a GUID for github). */
  eventId(envelope: Envelope): string;
  /** The chaos of one delivery to `target`: one draw per kind whatever the rates (one stream position per delivery). */
  chaos(target: string, rates: ChaosConfig | undefined): ChaosFlags;
}

/**
 * Event ids and chaos on streams of their own, apart from the fail rate's: adding a webhook never
 * moves which requests fail. The streams start over when the seed changes (a reload with a new one).
 */
export function createWebhookDraws(seed: () => number): WebhookDraws {
  let streams: { seed: number; draws: DrawStreams } | undefined;
  const labels = new Map<string, readonly string[]>(); // per target: its chaos streams' names, made once
  const draws = (): DrawStreams => {
    const now = seed();
    if (streams?.seed !== now) streams = { seed: now, draws: createDrawStreams(now) };
    return streams.draws;
  };
  const word = (d: DrawStreams): string => {
    const x = Math.floor(d.next('webhook event id') * 2 ** 32);
    return (HEX[x >>> 24] as string) + HEX[(x >>> 16) & 255] + HEX[(x >>> 8) & 255] + HEX[x & 255];
  };

  return {
    eventId(envelope) {
      const d = draws();
      const words = [word(d), word(d), word(d), word(d)] as const;
      if (envelope === 'github') return `${words[0]}-${words[1].slice(0, 4)}-4${words[1].slice(5, 8)}-a${words[2].slice(1, 4)}-${words[2].slice(4)}${words[3]}`;
      return `${idPrefix(envelope)}${words.join('').slice(0, 24)}`;
    },
    chaos(target, rates = NO_CHAOS) {
      let names = labels.get(target);
      if (names === undefined) labels.set(target, (names = KINDS.map((kind) => `webhook chaos ${kind} ${target}`)));
      const d = draws();
      const on = (i: number): boolean => {
        const u = d.next(names[i] as string);
        const rate = rates[KINDS[i] as keyof ChaosConfig];
        return rate > 0 && u < rate;
      };
      return { duplicate: on(0), reorder: on(1), badSignature: on(2), staleTimestamp: on(3) };
    },
  };
}

const NONE: string[] = [];
/** The names of the chaos kinds that are on, in a fixed order (one shared empty list for none). */
export function chaosNames(flags: ChaosFlags): string[] {
  return flags.duplicate || flags.reorder || flags.badSignature || flags.staleTimestamp ? KINDS.filter((kind) => flags[kind]) : NONE;
}
