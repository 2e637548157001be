import type { VirtualClock } from '../control/virtual-clock.js';
import type { Logger } from '../logger.js';
import type { FleetConnection } from './connection.js';
import type { Bus } from './bus.js';
import type { FleetKeys } from './keys.js';

/** The fleet's virtual clock in Redis: how far it is from real time, the same on every host. */
interface SharedClock {
  /** Virtual minus real time, ms. */
  offset: number;
}

function readClock(text: unknown): SharedClock | undefined {
  try {
    const clock = JSON.parse(String(text)) as SharedClock;
    return Number.isFinite(clock.offset) ? clock : undefined;
  } catch {
    return undefined;
  }
}

/**
 * The virtual clock of a fleet (`serve --clock` on every host): kept in Redis as its distance from
 * real time, so a host that starts later, or comes back after Redis was away, shows the fleet's
 * time; a move on one host (set, advance, reset) is applied on every host before its call answers.
 * Hosts read their own real clocks: keep them in sync (NTP), as for the certificates they serve.
 */
export function createFleetClock(conn: FleetConnection, keys: FleetKeys, bus: Bus, logger: Logger) {
  let clock: VirtualClock | undefined;
  const follow = (shared: SharedClock | undefined): void => {
    if (clock === undefined || shared === undefined) return;
    if (Math.abs(clock.now() - (Date.now() + shared.offset)) >= 1) clock.set(Date.now() + shared.offset);
  };
  /**
   * Reads the fleet's clock, or makes this host's the fleet's when there is none yet. Resolves to
   * the time this host took from the fleet; undefined when its own became the fleet's (or no Redis).
   */
  async function take(): Promise<number | undefined> {
    if (clock === undefined || !conn.up) return undefined;
    const mine = JSON.stringify({ offset: clock.now() - Date.now() } satisfies SharedClock);
    const set = await conn.send(['SET', keys.clock, mine, 'NX']);
    if (set !== null) return undefined;
    const shared = readClock(await conn.send(['GET', keys.clock]));
    if (shared === undefined) return undefined;
    follow(shared);
    return clock.now();
  }
  const unread = (err: Error): undefined => {
    logger.warn(`fleet: could not read the fleet's clock: ${err.message}`);
    return undefined;
  };
  bus.handle('clock', (change) => follow({ offset: Number(change.offset) }));
  conn.onUp(() => {
    const before = clock?.now();
    void take().then((now) => {
      // Redis away at the start, the fleet's clock running meanwhile: this host's time jumps to it.
      if (now !== undefined && before !== undefined && Math.abs(now - before) >= 1000)
        logger.info(`fleet: Redis is back: took the fleet's virtual clock, now ${new Date(now).toISOString()}`);
    }, unread);
  });
  return {
    /**
     * Joins with this host's virtual clock (none: the clock is not shared). Resolves to the fleet's
     * time when the fleet had a clock already, which this host took in place of its own start.
     */
    async join(virtual: VirtualClock | undefined): Promise<number | undefined> {
      clock = virtual;
      return take().catch(unread);
    },
    /** This host moved its clock: Redis and every other host take it. */
    async moved(now: number): Promise<void> {
      if (clock === undefined || !conn.up) return;
      const offset = now - Date.now();
      await conn.send(['SET', keys.clock, JSON.stringify({ offset } satisfies SharedClock)]).catch(() => {});
      await bus.announce({ op: 'clock', offset });
    },
    /** After a reset on every host (each put its clock back where it started): the fleet takes this host's. */
    async afterReset(parts: Record<string, boolean>): Promise<void> {
      if (parts.clock !== false && clock !== undefined) await this.moved(clock.now());
    },
  };
}
