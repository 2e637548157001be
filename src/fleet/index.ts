import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { hostname } from 'node:os';
import type { AnswerState } from '../answer/answer-state.js';
import type { ControlPlane } from '../control/control-plane.js';
import type { FleetLink } from '../control/fleet-link.js';
import type { OtherWorkers } from '../control/other-workers.js';
import type { VirtualClock } from '../control/virtual-clock.js';
import type { Logger } from '../logger.js';
import type { StubsOptions } from '../stubs/index.js';
import { redactStoreUrl } from '../config/store-url.js';
import { openBus } from './bus.js';
import { shareCa } from './ca.js';
import { createFleetClock } from './clock.js';
import { openFleetConnection } from './connection.js';
import { newHostId, registerHost, type HostRegistration } from './hosts.js';
import { createJournalLink } from './journal-link.js';
import { createJournalReader } from './journal-read.js';
import { createJournalSink } from './journal-sink.js';
import { fleetKeys } from './keys.js';
import { createFleetRotation } from './rotate.js';
import { shareScenarios } from './scenarios.js';
import { createFleetStubs } from './stubs.js';

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
  /** One HTTPS CA for every host (before the certificate is made). */
  shareCa(configDir: string): Promise<void>;
  /** Once listening, before the first answer: registered, and the fleet's clock, stubs and scenario states taken. */
  join(parts: JoinParts): Promise<void>;
  /** A reload changed the config served. */
  configChanged(revision: string): void;
  /** Writes what the journal still holds, leaves the registry and disconnects. */
  close(): Promise<void>;
}

/**
 * Opens a host's part in a fleet: the connections to its Redis, its channel, and the shared parts
 * (journal, stubs, scenario states, clock, rotation, CA). A Redis away at start is not an error: the
 * host answers on its own (limits as `storeDown` says) and joins when Redis is back.
 */
export async function openFleet(options: FleetOptions): Promise<Fleet> {
  const { logger } = options;
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
  let remote = 0;
  const asRemote = <T>(work: () => T): T => {
    remote++;
    try {
      return work();
    } finally {
      remote--;
    }
  };
  let journal: { readonly capacity: number } | undefined;
  let plane: ControlPlane | undefined;
  let registration: HostRegistration | undefined;
  const sink = createJournalSink(conn, keys, self, () => journal?.capacity ?? 0, logger);
  const reader = createJournalReader(conn, keys, logger);
  const clock = createFleetClock(conn, keys, bus, logger);
  const stubs = createFleetStubs(conn, keys, bus, logger);
  const rotation = createFleetRotation(
    bus,
    self,
    async () => (registration === undefined ? [] : registration.alive()),
    () => plane,
  );
  let scenarios: (AnswerState & { catchUp(): Promise<void> }) | undefined;
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
    keyRotated: (key, name) => rotation.keyRotated(key, name),
    ...(options.workers === undefined ? {} : { workers: options.workers }),
  });
  const attach = link.attach.bind(link);
  link.attach = (j, cp) => {
    journal = j;
    plane = cp;
    attach(j, cp);
  };

  return {
    url: options.url,
    salt: createHash('sha256').update(self).digest().readUInt32BE(0),
    link,
    scenarios(answers) {
      scenarios = shareScenarios(answers, conn, keys, bus, () => remote > 0, logger);
      return scenarios;
    },
    stubShare: (apply, store) => stubs.share(apply, store),
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
      const taken = [registration.first, clock.join(parts.virtualClock), stubs.catchUp(), scenarios?.catchUp()].map(
        (p) => p?.catch((err: Error) => logger.warn(`fleet: ${err.message}`)),
      );
      await Promise.all(taken);
    },
    configChanged: (revision) => registration?.configChanged(revision),
    async close() {
      await sink.close();
      await registration?.close();
      await conn.close();
    },
  };
}
