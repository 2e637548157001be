import { createHash, randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { hostname } from 'node:os';
import type { AnswerState } from '../answer/answer-state.js';
import type { ControlPlane } from '../control/control-plane.js';
import type { FleetLink } from '../control/fleet-link.js';
import type { OtherWorkers } from '../control/other-workers.js';
import type { VirtualClock } from '../control/virtual-clock.js';
import type { Logger } from '../logger.js';
import type { StubsOptions } from '../stubs/index.js';
import type { SessionBacking } from '../sessions/registry.js';
import { redactStoreUrl } from '../config/store-url.js';
import { openBus, sessionBuses } from './bus.js';
import { shareCa } from './ca.js';
import { openFleetConnection } from './connection.js';
import { newHostId, registerHost, type HostRegistration } from './hosts.js';
import { createJournalTail } from './journal-read.js';
import { fleetKeys } from './keys.js';
import { createFleetRotation } from './rotate.js';
import { openScope, SCOPE_CHANGES, type FleetScope } from './scope.js';
import { createSessionBacking } from './sessions.js';

export type { FleetScope } from './scope.js';

/** mockapi's version, as `fleet status` shows each host's. */
export function mockapiVersion(): string {
  try {
    return (JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string })
      .version;
  } catch {
    return 'unknown';
  }
}

export interface FleetOptions {
  /** The fleet's Redis (`fleet.store`, `serve --fleet`). */
  url: string;
  project: string;
  logger: Logger;
  /** A `serve --workers` worker's hub: its early retries are gathered through it, not the fleet. */
  workers?: Pick<OtherWorkers, 'clients'>;
  /** The names of the config's `keys:` as served now: a dropped session's counts of each go with it. */
  keyNames?: () => readonly string[];
  /** A line naming a session as it is shown (a session may be named as a key is, and a key is never shown). */
  shown?: (text: string) => string;
}

/** What a host joins with once it listens. */
export interface JoinParts {
  /** The URL it answers on. */
  address: string;
  /** The config it serves (its revision). */
  revision: string;
  virtualClock: VirtualClock | undefined;
}

/** A host's part in a fleet: what the composition root (src/mock-server.ts) hands to each part of the server. */
export interface Fleet {
  readonly url: string;
  /** A number of this host's own (from its id): what is drawn per host and must differ between hosts (webhook event ids). */
  readonly salt: number;
  /** The control plane's link: journal, waits, events, writes across every host. */
  readonly link: FleetLink;
  /** The scenario states, shared. */
  scenarios(answers: AnswerState): AnswerState;
  /** The run-time stubs, shared. */
  readonly stubShare: NonNullable<StubsOptions['share']>;
  /** The named sessions, every host's (src/sessions/ keeps them through it). */
  readonly sessions: SessionBacking;
  /** A named session's shared parts (its journal, stubs, scenario states, clock), made on first use here. */
  session(id: string): FleetScope;
  /** Lets go of a session's parts here: what its journal still holds is written first, unless `dropped` (the session is gone). */
  closeSession(id: string, dropped?: boolean): void;
  /** Called each time Redis is back (not at start). */
  onBack(listener: () => void): void;
  /** One HTTPS CA for every host (before the certificate is made). */
  shareCa(configDir: string): Promise<void>;
  /**
   * Once listening, before the first answer: registered, and the fleet's clock, stubs and scenario
   * states taken. Resolves to the fleet's time when this host took the fleet's running virtual clock
   * in place of its own `--clock` start; undefined when its clock became the fleet's (or it has none).
   */
  join(parts: JoinParts): Promise<number | undefined>;
  /** A reload changed the config served. */
  configChanged(revision: string): void;
  /** Writes what the journal still holds, leaves the registry and disconnects. */
  close(): Promise<void>;
}

/**
 * Opens a host's part in a fleet: the connections to its Redis, its channel, and the shared parts
 * (journal, stubs, scenario states, clock, sessions, rotation, CA). A Redis away at start is not an
 * error: the host answers on its own (limits as `storeDown` says) and joins when Redis is back.
 */
export async function openFleet(options: FleetOptions): Promise<Fleet> {
  const { logger } = options;
  const sessionLine = options.shown ?? ((text: string) => text);
  const keys = fleetKeys(options.project);
  const self = newHostId();
  const conn = await openFleetConnection(options.url, `mockapi-fleet-${self}`);
  const shown = redactStoreUrl(options.url);
  conn.onDown((reason) =>
    logger.warn(
      `fleet: Redis ${shown} is away (${reason}); the journal and the stubs go on on this host alone and catch up when it is back`,
    ),
  );
  if (!conn.up) logger.warn(`fleet: Redis ${shown} cannot be reached; this host answers on its own until it can`);
  const bus = await openBus(conn, keys.channel, self, logger);
  const tail = createJournalTail(conn, `${keys.nudge}${self}`, logger);
  let plane: ControlPlane | undefined;
  let registration: HostRegistration | undefined;
  const rotation = createFleetRotation(
    bus,
    self,
    async () => (registration === undefined ? [] : registration.alive()),
    () => plane,
  );
  const root = openScope({
    conn,
    keys,
    bus,
    tail,
    writer: self,
    logger,
    keyRotated: (key, name) => rotation.keyRotated(key, name),
    ...(options.workers === undefined ? {} : { workers: options.workers }),
  });
  const attach = root.link.attach.bind(root.link);
  root.link.attach = (j, cp) => {
    plane = cp;
    attach(j, cp);
  };
  const buses = sessionBuses(bus, SCOPE_CHANGES);
  const scopes = new Map<string, FleetScope>();
  const closing = new Set<Promise<void>>();
  let joined = false;

  function closeSession(id: string, dropped = false): void {
    const scope = scopes.get(id);
    if (scope === undefined) return;
    scopes.delete(id);
    buses.forget(id);
    tail.forget(fleetKeys(options.project, id).journal);
    const closed = scope
      .close(dropped)
      .catch((err: Error) => logger.warn(sessionLine(`fleet: session ${id}: ${err.message}`)));
    closing.add(closed);
    void closed.finally(() => closing.delete(closed));
  }

  return {
    url: options.url,
    salt: createHash('sha256').update(self).digest().readUInt32BE(0),
    link: root.link,
    scenarios: (answers) => root.scenarios(answers),
    stubShare: root.stubShare,
    sessions: createSessionBacking(conn, keys, bus, logger, options.keyNames, (part) => root.hold(part)),
    session(id) {
      let scope = scopes.get(id);
      if (scope === undefined) {
        scope = openScope({
          conn,
          keys: fleetKeys(options.project, id),
          bus: buses.of(id),
          tail,
          // A session made again (same id) writes as a new writer: its numbers start again.
          writer: `${self}.${randomBytes(4).toString('hex')}`,
          logger,
          keyRotated: async () => [], // the keys are the config's: never rotated in a session
          guard: { sessions: keys.sessions, id },
          after: () => root.settled(),
        });
        scopes.set(id, scope);
      }
      return scope;
    },
    closeSession,
    onBack(listener) {
      root.onBack(() => {
        if (joined) listener();
      });
    },
    shareCa: (configDir) => shareCa(conn, keys, configDir, logger),
    async join(parts) {
      registration = registerHost(
        conn,
        keys,
        {
          id: self,
          address: parts.address,
          hostname: hostname(),
          pid: process.pid,
          version: mockapiVersion(),
          config: parts.revision,
        },
        logger,
      );
      // Registered before the first answer: a host that answers is in `fleet status` and confirms rotations.
      const [, clockTaken] = await Promise.all([
        registration.first.catch((err: Error) => logger.warn(`fleet: ${err.message}`)),
        root.join(parts.virtualClock),
      ]);
      joined = true;
      return clockTaken;
    },
    configChanged: (revision) => registration?.configChanged(revision),
    async close() {
      for (const id of [...scopes.keys()]) closeSession(id);
      await Promise.all([root.close(), ...closing]);
      await registration?.close();
      await tail.close();
      await conn.close();
    },
  };
}
