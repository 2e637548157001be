import type { Envelope } from '../config/types-webhooks.js';
import { drawFromLanes, streamLanes } from '../seeded.js';
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
  /** The place of a new event id on its stream, without writing it: {@link eventIdAt} writes it, in whichever thread needs it. */
  reserveEventId(): EventIdPlace;
  /** The chaos of one delivery to `target`: one draw per kind whatever the rates (one stream position per delivery). */
  chaos(target: string, rates: ChaosConfig | undefined): ChaosFlags;
}

/** Where an event id sits on its stream: the stream's lanes (from the seed) and the position of its first word. */
export interface EventIdPlace {
  readonly lanes: readonly [number, number];
  readonly n: number;
}

/** 8 hex digits: the `n`-th number of the stream `lanes`. */
function word(lanes: readonly [number, number], n: number): string {
  const x = Math.floor(drawFromLanes(lanes, n) * 2 ** 32);
  return (HEX[x >>> 24] as string) + HEX[(x >>> 16) & 255] + HEX[(x >>> 8) & 255] + HEX[x & 255];
}

/**
 * The event id at `place`, as the envelope's service writes them: a pure function of the place, so
 * the delivery thread writes the same id into the bytes it sends as the server's thread shows.
 */
export function eventIdAt({ lanes, n }: EventIdPlace, envelope: Envelope): string {
  const w0 = word(lanes, n);
  const w1 = word(lanes, n + 1);
  const w2 = word(lanes, n + 2);
  if (envelope === 'github')
    return `${w0}-${w1.slice(0, 4)}-4${w1.slice(5, 8)}-a${w2.slice(1, 4)}-${w2.slice(4)}${word(lanes, n + 3)}`;
  return `${idPrefix(envelope)}${w0}${w1}${w2}`; // 24 hex digits: the fourth word is not written
}

/** Per seed: the event-id stream's lanes and position, and per target its chaos streams' lanes and position. */
interface SeedStreams {
  readonly seed: number;
  readonly idLanes: readonly [number, number];
  idCount: number;
  readonly targets: Map<string, { readonly lanes: ReadonlyArray<readonly [number, number]>; count: number }>;
}

const CALM: ChaosFlags = Object.freeze({
  duplicate: false,
  reorder: false,
  badSignature: false,
  staleTimestamp: false,
});

/**
 * Event ids and chaos on streams of their own, apart from the fail rate's: adding a webhook never
 * moves which requests fail. The streams start over when the seed changes (a reload with a new one).
 * Each stream is counter-based (the n-th number is a pure function of seed, name and n), so a
 * number nobody reads (the chaos of a kind at rate 0) only moves the stream's position on: the
 * numbers drawn are those of one `next` per kind per delivery, without computing the unread ones.
 */
export function createWebhookDraws(seed: () => number): WebhookDraws {
  let streams: SeedStreams | undefined;
  const current = (): SeedStreams => {
    const now = seed();
    if (streams?.seed !== now)
      streams = { seed: now, idLanes: streamLanes(now, 'webhook event id'), idCount: 0, targets: new Map() };
    return streams;
  };
  const reserve = (): EventIdPlace => {
    const s = current();
    const n = s.idCount;
    s.idCount += 4; // four words an id, whether or not all are written
    return { lanes: s.idLanes, n };
  };

  return {
    reserveEventId: reserve,
    chaos(target, rates = NO_CHAOS) {
      const s = current();
      let t = s.targets.get(target);
      if (t === undefined)
        s.targets.set(
          target,
          (t = { lanes: KINDS.map((kind) => streamLanes(s.seed, `webhook chaos ${kind} ${target}`)), count: 0 }),
        );
      const n = t.count++;
      if (!(rates.duplicate > 0 || rates.reorder > 0 || rates.badSignature > 0 || rates.staleTimestamp > 0))
        return CALM;
      const lanes = t.lanes;
      const on = (i: number): boolean => {
        const rate = rates[KINDS[i] as keyof ChaosConfig];
        return rate > 0 && drawFromLanes(lanes[i] as readonly [number, number], n) < rate;
      };
      return { duplicate: on(0), reorder: on(1), badSignature: on(2), staleTimestamp: on(3) };
    },
  };
}

const NONE: string[] = [];
/** The names of the chaos kinds that are on, in a fixed order (one shared empty list for none). */
export function chaosNames(flags: ChaosFlags): string[] {
  return flags.duplicate || flags.reorder || flags.badSignature || flags.staleTimestamp
    ? KINDS.filter((kind) => flags[kind])
    : NONE;
}
