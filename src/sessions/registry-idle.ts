/**
 * The idle check of the sessions' registry: a few times per ttl it drops the sessions nobody used
 * for `sessions.ttl` (on a fleet, those no host used, everywhere), keeping those an admin call holds.
 */
import type { Clock } from '../clock.js';
import type { SessionBacking } from './backing.js';
import type { SessionEntry } from './registry-types.js';
import type { SessionSettings } from './settings.js';

/** What the idle check works with. */
export interface IdleCheckParts {
  readonly entries: ReadonlyMap<string, SessionEntry>;
  readonly now: Clock;
  readonly settings: () => SessionSettings;
  readonly backing: SessionBacking | undefined;
  /** Whether a session has an admin call in progress: it is not idle then. */
  busy(id: string): boolean;
  /** Drops an idle session, here and in a shared store. */
  drop(id: string): void;
  warn(message: string): void;
}

/** The check, armed while sessions exist. */
export interface IdleCheck {
  /** Arms it when sessions exist and none is armed. */
  arm(): void;
  /** Arms it again with the ttl now in force (a reload: a shorter ttl is checked from now on). */
  rearm(): void;
  /** Stops it for good. */
  stop(): void;
}

/** The idle check over the registry's `entries`. */
export function createIdleCheck(parts: IdleCheckParts): IdleCheck {
  const { entries, now, settings, backing, warn } = parts;
  let timer: NodeJS.Timeout | undefined;
  let closed = false;

  /** The idle check runs a few times per ttl (at least every minute), so a session goes at most a quarter of its ttl late. */
  function arm(): void {
    if (closed || timer !== undefined || entries.size === 0) return;
    const period = Math.max(50, Math.min(60_000, Math.floor(settings().ttlMs / 4)));
    timer = setTimeout(() => void sweep(), period);
    timer.unref();
  }

  let sweeping = false;
  async function sweep(): Promise<void> {
    timer = undefined;
    const ttl = settings().ttlMs;
    const at = now();
    if (backing !== undefined) {
      // One sweep at a time: a slow Redis makes the next one wait for this one, not pile up.
      if (!sweeping) {
        sweeping = true;
        await sweepShared(backing, ttl, at).catch((err: Error) => warn(`sessions: ${err.message}`));
        sweeping = false;
      }
      return arm();
    }
    for (const entry of [...entries.values()]) {
      if (at - entry.lastSeen < ttl) continue;
      if (parts.busy(entry.id)) entry.lastSeen = at;
      else parts.drop(entry.id);
    }
    arm();
  }

  /** On a fleet: this host's uses go to the fleet first, then the sessions no host used for a ttl go, everywhere. */
  async function sweepShared(shared: SessionBacking, ttl: number, at: number): Promise<void> {
    const uses = new Map<string, number>();
    for (const entry of entries.values()) {
      if (parts.busy(entry.id)) entry.lastSeen = at;
      if (entry.lastSeen > (entry.told ?? 0)) uses.set(entry.id, (entry.told = entry.lastSeen));
    }
    if (uses.size > 0) await shared.seen(uses);
    const idle = await shared.expire(at - ttl);
    for (const id of idle) parts.drop(id);
    if (idle.length > 0) await shared.drop(idle);
  }

  return {
    arm,
    rearm() {
      if (timer !== undefined) {
        clearTimeout(timer);
        timer = undefined;
      }
      arm();
    },
    stop() {
      closed = true;
      if (timer !== undefined) clearTimeout(timer);
      timer = undefined;
    },
  };
}
