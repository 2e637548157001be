import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Writable } from 'node:stream';
import type { ReloadResult } from './answer/config-runtime.js';
import type { Clock } from './clock.js';
import type { Config } from './config/types.js';
import type { ControlCalls } from './control/calls.js';
import type { ClientReport } from './control/early-retries.js';
import type { RouteTable } from './control/admin-api.js';
import type { HttpTimeouts } from './http/http-limits.js';
import type { LogFormat } from './http/request-log.js';
import type { Logger } from './logger.js';
import type { RecordingSink } from './record/exchange.js';
import type { StubCalls } from './stubs/index.js';
import type { HttpsOption } from './tls/settings.js';
import type { WebhookCalls } from './webhooks/index.js';
import type { SessionCalls } from './sessions/index.js';
import type { CollectionInfo, ResourceCalls } from './resources/index.js';

// What startMockServer (mock-server.ts) takes and gives.

/** Options of {@link startMockServer}; they mirror the `mockapi serve` flags. */
export interface MockServerOptions {
  /** A config file path (default `./mockapi.yaml`) or a config object written as in the YAML file. */
  config?: string | Record<string, unknown>;
  /** `0` picks a free port. Default: the config's `server.port`, else 4010. */
  port?: number;
  /** Default: the config's `server.host`, else `127.0.0.1`. */
  host?: string;
  /** Hot reload on config changes. Default `false` here (the CLI's default is `true`). */
  watch?: boolean;
  /** Makes simulated failures reproducible; overrides the config's `seed`. */
  seed?: number;
  /** Usage state file, or `false` for memory only. Default `false` here (the CLI's default is `.mockapi/state.json`). */
  state?: string | false;
  /** Request log format. Default `off` here. */
  log?: LogFormat;
  /** Where request lines go (default `process.stdout`). */
  logStream?: Writable;
  /** Colour request lines (pretty format only). */
  color?: boolean;
  /** Reloads, warnings and errors. Default: silent. */
  logger?: Logger;
  /** Redis URL of the shared limits; overrides the config's `limits.store`. */
  store?: string;
  /**
   * Redis URL of a fleet (`serve --fleet`): this server is one host of many that behave as one
   * (stubs, resources, journal, clock, scenarios, limits shared); overrides the config's `fleet.store`.
   */
  fleet?: string;
  /** @internal `serve --workers`: also listen on a loopback port of this worker alone, and register that one (see listenOwnPort). */
  ownPort?: boolean;
  /**
   * @internal `serve --clock` on a host of a fleet whose virtual clock was running: called at the
   * start with the fleet's time, which this server took in place of its `clock` (for its start line).
   */
  onFleetClock?: (now: number) => void;
  /**
   * A virtual clock for tests (`serve --clock`): an ISO time (or a Date) where the clock
   * starts and runs on in real time, moved by `server.clock.set()/advance()`. A function is an
   * injected clock (for unit tests of limits), which cannot be moved through the control calls.
   */
  clock?: Clock | string | Date;
  /**
   * Required in `X-Mockapi-Admin-Token` on admin calls when set. A server bound beyond loopback
   * without one makes one (see {@link MockServer.adminToken}).
   */
  adminToken?: string;
  /**
   * @internal Overrides of the node:http timeouts in {@link HTTP_SERVER_OPTIONS}, so tests can
   * check slow-client handling in milliseconds instead of seconds. Not for users.
   */
  httpTimeouts?: HttpTimeouts;
  /** `serve --upstream <url>`: requests no endpoint answers go to this URL (over the config's `upstream.url`). */
  upstream?: string;
  /** @internal `mockapi record`: where upstream exchanges go, and the admin routes of the recording. */
  recording?: { sink: RecordingSink; routes: RouteTable };
  /**
   * @internal `mockapi verify`: given the server's request handler (the same one every port
   * serves), to ask it for answers without a socket (src/verify/inject.ts).
   */
  onHandler?: (handler: (req: IncomingMessage, res: ServerResponse) => void) => void;
  /**
   * @internal The test helpers serve a copy of the config in a folder whose entries link to the
   * original's folder: this is that folder, where a run-time stub's `bodyFile` may then lead (it
   * must otherwise be a file inside the config's folder). Not for users.
   */
  linkedFolder?: string;
  /**
   * At stop, how long (ms) to wait for pending webhook deliveries (`serve --drain-webhooks`).
   * Default 0: what is still pending is reported and dropped.
   */
  drainWebhooks?: number;
  /**
   * Also serve over HTTPS, beside HTTP (`serve --https [port]`, `--tls-cert`, `--tls-key`):
   * `true`, or `{ port, cert, key, hosts }` over the config's `server.https`; `false` turns it off.
   * Without a certificate of your own, the project's CA (`.mockapi/tls/`) signs one at each start.
   */
  https?: HttpsOption;
}

/** A running mock server, with the control calls (journal, usage, reset, key, scenarios, clock) and the stub calls. */
export interface MockServer extends ControlCalls, StubCalls {
  /** Base URL, e.g. `http://127.0.0.1:4010`; mock endpoints are under `${url}/mock`. */
  url: string;
  port: number;
  /** With HTTPS on: its base URL, e.g. `https://127.0.0.1:4443` (the same endpoints as {@link url}). */
  httpsUrl?: string;
  httpsPort?: number;
  /** With HTTPS on and no certificate of your own: PEM of the project's CA, to pass as `ca` to a client. */
  ca?: string;
  /** And the file it is in (`.mockapi/tls/ca.pem`), for NODE_EXTRA_CA_CERTS. */
  caFile?: string;
  /** The config now served. */
  readonly config: Config;
  /**
   * Stops accepting connections, lets in-flight requests finish (a client still sending its request
   * or not reading its answer gets 1 s), closes idle and silent connections at once, flushes usage.
   */
  close(): Promise<void>;
  /** Re-reads the config file now (hot reload does this on change). Keeps the last good config on error. */
  reload(): Promise<ReloadResult>;
  /** The admin token this server requires, when it requires one (`adminToken`, or made for a non-loopback bind). */
  readonly adminToken: string | undefined;
  /** The clients given a Retry-After and how many came back early, as `GET /__mockapi/clients`. */
  clients(): ClientReport[];
  /** The webhooks this server sends: targets, the delivery log, waits and triggers. */
  readonly webhooks: WebhookCalls;
  /** Named sessions (create, delete, list): each with its own stubs, journal, clock and limits. */
  readonly sessions: SessionCalls;
  /** How many requests broke the OpenAPI description (`openapi.spec`) since the start. */
  violatedRequests(): number;
  /** The collections of `resources:` by name: `server.resources.customers.create({ email })`, `.get(id)`, `.list(filter)`. */
  readonly resources: ResourceCalls;
  /** Each collection with its style, path and how many objects it holds (`GET /__mockapi/resources`). */
  resourceCollections(): Promise<CollectionInfo[]>;
}
