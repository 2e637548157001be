import type { Logger } from '../logger.js';
import type { FleetConnection } from './connection.js';

/** A change one host tells the others (stubs, clock, scenarios, reset, rotation): `op` names it. */
export type Change = { op: string } & Record<string, unknown>;

/** What the messages on the fleet's channel carry; a host reads version 1 and skips (with a note) anything else. */
export const WIRE_VERSION = 1;

type Message = { v: number; from: string; call?: number; change?: Change; ack?: number; to?: string; error?: string };

/** What a change got from the others. */
export interface Announced {
  /** Hosts that applied it. */
  acked: string[];
  /** Hosts that answered with an error (a rotation their file refused), by id. */
  failed: { host: string; error: string }[];
  /** How many hosts (or which, when they were named) did not answer in time. */
  missing: string[] | number;
}

/**
 * The fleet's channel: a host publishes a change, every other host applies it and answers, and the
 * change resolves once they all did (or after its timeout). Pub/sub loses what a disconnected host
 * would have heard: each part reads its whole state from Redis again when the connection comes back.
 */
export interface Bus {
  /** Applies `change` everywhere else; `expect` names the hosts to wait for (default: every subscriber). */
  announce(change: Change, options?: { timeoutMs?: number; expect?: string[] }): Promise<Announced>;
  /** Tells the others without waiting for them. */
  tell(change: Change): void;
  /** What to do with the changes of `op` that other hosts make. */
  handle(op: string, apply: (change: Change, from: string) => Promise<void> | void): void;
}

export async function openBus(conn: FleetConnection, channel: string, self: string, logger: Logger): Promise<Bus> {
  const handlers = new Map<string, (change: Change, from: string) => Promise<void> | void>();
  const calls = new Map<
    number,
    { expect: Set<string> | undefined; left: number; result: Announced; done: () => void }
  >();
  let nextCall = 0;
  const noted = new Set<string>();
  const note = (what: string): void => {
    if (noted.has(what)) return;
    noted.add(what);
    logger.warn(`fleet: skipped ${what}`);
  };
  const publish = (message: Message): Promise<number> =>
    conn.send(['PUBLISH', channel, JSON.stringify(message)]).then((n) => Number(n));

  const onAck = (m: Message): void => {
    const call = calls.get(m.ack as number);
    if (call === undefined || m.to !== self) return;
    if (call.expect !== undefined && !call.expect.delete(m.from)) return;
    if (m.error === undefined) call.result.acked.push(m.from);
    else call.result.failed.push({ host: m.from, error: m.error });
    if (call.expect !== undefined ? call.expect.size === 0 : --call.left <= 0) call.done();
  };
  const onChange = (m: Message): void => {
    const change = m.change as Change;
    const handler = typeof change?.op === 'string' ? handlers.get(change.op) : undefined;
    const answer = (error?: string): void => {
      if (m.call !== undefined)
        void publish({
          v: WIRE_VERSION,
          from: self,
          ack: m.call,
          to: m.from,
          ...(error === undefined ? {} : { error }),
        }).catch(() => {});
    };
    if (handler === undefined) {
      note(`a change "${String(change?.op)}" from host ${m.from} that this version of mockapi does not know`);
      return answer(`unknown change ${String(change?.op)}`);
    }
    Promise.resolve()
      .then(() => handler(change, m.from))
      .then(
        () => answer(),
        (err: Error) => answer(err.message),
      );
  };
  const hear = (text: string): void => {
    let m: Message;
    try {
      m = JSON.parse(text) as Message;
    } catch {
      return note('a damaged message on the fleet channel');
    }
    if (typeof m !== 'object' || m === null || m.from === self) return;
    if (typeof m.from !== 'string') return note('a message on the fleet channel from no host it names');
    if (m.v !== WIRE_VERSION)
      return note(
        `messages of format ${String(m.v)} (from a newer or older mockapi); this host reads format ${WIRE_VERSION}`,
      );
    if (m.ack !== undefined) onAck(m);
    else if (m.change !== undefined) onChange(m);
  };
  // Never throws into the Redis client, which runs it while it reads what came in.
  const listener = (text: string): void => {
    try {
      hear(text);
    } catch (err) {
      note(`a message on the fleet channel it could not read (${err instanceof Error ? err.message : String(err)})`);
    }
  };
  // Held across reconnections; while Redis is away the connection makes it when it is back, before
  // the parts that catch up with the fleet are told so.
  await conn.subscribe(channel, listener);

  return {
    announce(change, options = {}) {
      const call = ++nextCall;
      const result: Announced = { acked: [], failed: [], missing: 0 };
      const expect = options.expect === undefined ? undefined : new Set(options.expect.filter((h) => h !== self));
      if (expect !== undefined && expect.size === 0) return Promise.resolve({ ...result, missing: [] });
      return new Promise((resolve) => {
        let timer: NodeJS.Timeout | undefined;
        const entry = {
          expect,
          left: Number.POSITIVE_INFINITY,
          result,
          done: () => {
            clearTimeout(timer);
            calls.delete(call);
            result.missing =
              entry.expect !== undefined
                ? [...entry.expect]
                : Number.isFinite(entry.left)
                  ? Math.max(0, entry.left)
                  : 0;
            resolve(result);
          },
        };
        calls.set(call, entry);
        timer = setTimeout(entry.done, options.timeoutMs ?? 1000);
        publish({ v: WIRE_VERSION, from: self, call, change }).then(
          (receivers) => {
            // Every subscriber heard it, this host's own included.
            if (entry.expect === undefined) {
              entry.left = receivers - 1 - result.acked.length - result.failed.length;
              if (entry.left <= 0) entry.done();
            }
          },
          () => entry.done(), // Redis away: nobody else heard it
        );
      });
    },
    tell(change) {
      void publish({ v: WIRE_VERSION, from: self, change }).catch(() => {});
    },
    handle(op, apply) {
      handlers.set(op, apply);
    },
  };
}

/**
 * The buses of the fleet's named sessions over the one channel: a session's change goes as
 * `session:<op>` with the session's id, and reaches that session's handlers on each host that holds
 * its parts (a host that does not hold them answers at once: it reads the session's state from Redis
 * when it first needs it). Nothing is kept per session but its handlers, dropped with it.
 *
 * Every op of `ops` is routed from the start, so a host that holds no session yet knows them all;
 * a session part that handles an op not among them is a bug, refused when it registers.
 */
export interface SessionBuses {
  /** The bus of the session `id`. */
  of(id: string): Bus;
  /** Forgets the session's handlers (it was dropped here). */
  forget(id: string): void;
}

export function sessionBuses(root: Bus, ops: readonly string[]): SessionBuses {
  const scopes = new Map<string, Map<string, (change: Change, from: string) => Promise<void> | void>>();
  const routed = new Set(ops);
  for (const op of routed) {
    root.handle(`session:${op}`, (change, from) => {
      const apply = scopes.get(String(change.session))?.get(op);
      return apply?.({ ...change, op }, from);
    });
  }
  return {
    of(id) {
      const wrap = (change: Change): Change => ({ ...change, op: `session:${change.op}`, session: id });
      return {
        announce: (change, options) => root.announce(wrap(change), options),
        tell: (change) => root.tell(wrap(change)),
        handle(op, apply) {
          if (!routed.has(op)) throw new Error(`the fleet routes no session change "${op}": add it to SCOPE_CHANGES`);
          let handlers = scopes.get(id);
          if (handlers === undefined) scopes.set(id, (handlers = new Map()));
          handlers.set(op, apply);
        },
      };
    },
    forget: (id) => void scopes.delete(id),
  };
}
