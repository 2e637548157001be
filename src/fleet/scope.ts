import type { AnswerState } from '../answer/answer-state.js';
import type { FleetLink } from '../control/fleet-link.js';
import type { OtherWorkers } from '../control/other-workers.js';
import type { VirtualClock } from '../control/virtual-clock.js';
import type { Logger } from '../logger.js';
import type { StubsOptions } from '../stubs/index.js';
import type { Bus } from './bus.js';
import { createFleetClock } from './clock.js';
import type { FleetConnection } from './connection.js';
import { createGeneration, type Refill } from './generation.js';
import { createJournalLink } from './journal-link.js';
import type { JournalTail } from './journal-read.js';
import { createJournalSink } from './journal-sink.js';
import type { FleetKeys } from './keys.js';
import { shareScenarios, type SharedScenarios } from './scenarios.js';
import { createFleetStubs } from './stubs.js';

/**
 * What a fleet shares of one session — the default one, or a named one — through its keys: its
 * journal (a stream of its own), its run-time stubs, its scenario states and its virtual clock.
 */
export interface FleetScope {
  /** The control plane's link: the journal, waits, events and writes across every host. */
  readonly link: FleetLink;
  /** The run-time stubs, shared. */
  readonly stubShare: NonNullable<StubsOptions['share']>;
  /** The scenario states, shared (called once, with the session's own). */
  scenarios(answers: AnswerState): AnswerState;
  /**
   * Takes the fleet's clock, stubs and scenario states (before the first answer); resolves to the
   * fleet's time when this scope's virtual clock took the fleet's (see createFleetClock's `join`).
   */
  join(virtualClock: VirtualClock | undefined): Promise<number | undefined>;
  /** What else this scope holds of the fleet's state (the sessions), put back when Redis restarted without it. */
  hold(part: () => Refill[]): void;
  /** Settles once this scope's check of Redis's epoch (and what it put back) is done. */
  settled(): Promise<void>;
  /** Called each time Redis is back, once what this host held is put back if Redis lost it, and when another host put back. */
  onBack(listener: () => void): void;
  /** The journal's entries still here go to Redis (bounded, as a query waits; none when `discard`: the session was dropped); stops listening for the fleet's changes. */
  close(discard?: boolean): Promise<void>;
}

export interface ScopeOptions {
  conn: FleetConnection;
  keys: FleetKeys;
  bus: Bus;
  tail: JournalTail;
  /** The journal's writer as its marks name it (unique per writer: a session made again starts a new one). */
  writer: string;
  logger: Logger;
  keyRotated(key: string, name: string | undefined): Promise<string[]>;
  workers?: Pick<OtherWorkers, 'clients'>;
  /** A named session's scope: its id in the fleet's sessions hash (nothing is put back for a dropped one). */
  guard?: { sessions: string; id: string };
  /** Settles once the fleet's own scope checked its epoch (a named session's waits for it). */
  after?: () => Promise<void>;
}

/**
 * The changes the parts of a scope take from its bus (the clock, the stubs, the journal link and
 * the scenarios each register theirs): a named session's are routed on every host from the start.
 */
export const SCOPE_CHANGES = [
  'clock',
  'stub',
  'journal-clear',
  'reset',
  'scenario',
  'scenario-state',
  'scenarios-reset',
  'refilled',
] as const;

/** Opens one session's shared parts; what it listens to on the connection is let go by `close`. */
export function openScope(options: ScopeOptions): FleetScope {
  const { keys, bus, logger } = options;
  const generation = createGeneration(options.conn, {
    key: keys.epoch,
    ...(options.guard === undefined ? {} : { guard: options.guard }),
    ...(options.after === undefined ? {} : { after: options.after }),
    refilled: () => bus.tell({ op: 'refilled' }),
    logger,
    name: options.guard?.id ?? '',
  });
  const checked = (): Promise<void> =>
    generation.check().catch((err: Error) => logger.warn(`fleet: could not read the fleet's epoch: ${err.message}`));
  const conn = scopedConnection(options.conn, checked);
  let remote = 0;
  const asRemote = <T>(work: () => T): T => {
    remote++;
    try {
      return work();
    } finally {
      remote--;
    }
  };
  let capacity: () => number = () => 0;
  const sink = createJournalSink(conn, keys, options.writer, () => capacity(), logger);
  const reader = options.tail.reader(keys.journal);
  const clock = createFleetClock(conn, keys, bus, logger);
  const stubs = createFleetStubs(conn, keys, bus, logger);
  let scenarios: SharedScenarios | undefined;
  generation.hold(() => [...stubs.held(), ...(scenarios?.held() ?? [])]);
  const backs: (() => void)[] = [];
  // Another host put back its copy after this one caught up (this one knew no epoch): again.
  bus.handle('refilled', () => {
    for (const p of [stubs.catchUp(), scenarios?.catchUp()])
      p?.catch((err: Error) => logger.warn(`fleet: ${err.message}`));
    for (const listener of backs) listener();
  });
  const link = createJournalLink({
    conn,
    keys,
    bus,
    sink,
    reader,
    asRemote,
    onReset: [(parts) => stubs.reset(parts)],
    afterReset: [(parts) => clock.afterReset(parts)],
    clockMoved: (now) => clock.moved(now),
    keyRotated: options.keyRotated,
    ...(options.workers === undefined ? {} : { workers: options.workers }),
  });
  const attach = link.attach.bind(link);
  link.attach = (journal, plane) => {
    capacity = () => journal.capacity;
    attach(journal, plane);
  };
  return {
    link,
    stubShare: (apply, store) => stubs.share(apply, store),
    scenarios(answers) {
      scenarios = shareScenarios(answers, conn, keys, bus, () => remote > 0, logger);
      return scenarios;
    },
    hold: (part) => generation.hold(part),
    settled: () => generation.settled(),
    onBack(listener) {
      backs.push(listener);
      conn.onUp(listener);
    },
    async join(virtualClock) {
      await checked();
      const taken = [stubs.catchUp(), scenarios?.catchUp()].map((p) =>
        p?.catch((err: Error) => logger.warn(`fleet: ${err.message}`)),
      );
      const [time] = await Promise.all([clock.join(virtualClock), ...taken]);
      return time;
    },
    async close(discard = false) {
      conn.release();
      if (discard) sink.discard();
      else await sink.close();
    },
  };
}

/** The fleet's connection as one scope sees it: its `onUp` listeners go with the scope. */
function scopedConnection(conn: FleetConnection, checked: () => Promise<void>): FleetConnection & { release(): void } {
  const ups = new Set<() => void>();
  // The parts catch up once what this host held is put back, if Redis lost it (generation.ts).
  const stop = conn.onUp(
    () =>
      void checked().finally(() => {
        for (const listener of [...ups]) listener();
      }),
  );
  return {
    get up() {
      return conn.up;
    },
    url: conn.url,
    send: (args) => conn.send(args),
    run: (s, k, a) => conn.run(s, k, a),
    sendOpen: (args) => conn.sendOpen(args),
    subscribe: (channel, listener) => conn.subscribe(channel, listener),
    blocking: () => conn.blocking(),
    onUp(listener) {
      ups.add(listener);
      return () => void ups.delete(listener);
    },
    onDown: (listener) => conn.onDown(listener),
    close: () => conn.close(),
    release() {
      stop();
      ups.clear();
    },
  };
}
