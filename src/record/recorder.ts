import { AdminAnswer, type RouteTable } from '../control/admin-api.js';
import type { RecordedExchange, RecordingSink } from './exchange.js';
import type { WriteOutcome } from './write.js';

/** `--mode`: `new` sends only requests no endpoint answers upstream; `all` sends every request. */
export type RecordMode = 'new' | 'all';

export interface RecorderOptions {
  /** Whether the served config keeps upstream 401/403/429 answers (`recording.recordRefusals`). */
  recordRefusals(): boolean;
  mode: RecordMode;
  /** `--only 'GET /v1/*'`: routes to keep (a `*` stands for anything); empty keeps all. */
  only: readonly string[];
  /** Writes (or, dry, previews) the exchanges recorded so far. */
  write(exchanges: readonly RecordedExchange[], left: readonly string[], dryRun: boolean): Promise<WriteOutcome>;
}

/** A recording in progress: the sink the upstream step fills, its admin routes, and a final write. */
export interface Recorder {
  sink: RecordingSink;
  routes: RouteTable;
  /** Writes what is pending, if anything (on stop of the command); undefined when nothing was. */
  finish(): Promise<WriteOutcome | undefined>;
}

const REFUSALS = new Set([401, 403, 429]);

/** An `--only` pattern (`GET /v1/*`, or a path alone for any method) as a RegExp over `METHOD /path`. */
export function routeGlob(pattern: string): RegExp {
  const [method, ...rest] = pattern.trim().split(/\s+/);
  const path = rest.join(' ');
  const escape = (s: string) => s.replace(/[.+?^${}()|[\]\\]/g, '\\$&').replace(/\*/g, '.*');
  if (path === '') return new RegExp(`^[A-Z]+ ${escape(method ?? '*')}$`);
  return new RegExp(`^${escape((method ?? '*').toUpperCase())} ${escape(path)}$`);
}

/** Starts recording at once (as `mockapi record` does); `POST /__mockapi/recording/stop` writes and stops, `…/start` starts again. */
export function createRecorder(options: RecorderOptions): Recorder {
  const only = options.only.map(routeGlob);
  let active = true;
  let seq = 0;
  let exchanges: RecordedExchange[] = [];
  let refused = 0;
  let outside = 0;
  let writing: Promise<WriteOutcome> | undefined;

  const left = () => [
    ...(refused > 0 ? [`${refused} upstream 401/403/429 answer${refused === 1 ? ' was' : 's were'} proxied but not recorded (recording.recordRefusals: true keeps them)`] : []),
    ...(outside > 0 ? [`${outside} request${outside === 1 ? '' : 's'} outside --only`] : []),
  ];

  const sink: RecordingSink = {
    get active() {
      return active;
    },
    all: options.mode === 'all',
    wants(method, path, status) {
      if (only.length > 0 && !only.some((re) => re.test(`${method} ${path}`))) {
        outside++;
        return false;
      }
      if (REFUSALS.has(status) && !options.recordRefusals()) {
        refused++;
        return false;
      }
      return true;
    },
    capture(exchange) {
      exchanges.push({ seq: seq++, ...exchange });
    },
  };

  /** Writes what was recorded; what it wrote is no longer pending. One write at a time. */
  async function write(): Promise<WriteOutcome> {
    while (writing !== undefined) await writing.catch(() => undefined);
    const taken = exchanges;
    const notes = left();
    writing = options.write(taken, notes, false);
    try {
      const outcome = await writing;
      if (outcome.code === 0) {
        exchanges = exchanges.slice(taken.length);
        refused = 0;
        outside = 0;
      }
      return outcome;
    } finally {
      writing = undefined;
    }
  }

  const status = () => ({ recording: active, mode: options.mode, only: options.only, requests: exchanges.length, notRecorded: refused + outside });

  const routes: RouteTable = {
    recording: { GET: status },
    'recording/start': {
      POST: () => {
        active = true;
        return status();
      },
    },
    'recording/stop': {
      POST: async () => {
        active = false;
        const outcome = await write();
        const body = { ...status(), written: outcome.code === 0, summary: outcome.lines };
        return outcome.code === 0 ? body : new AdminAnswer(409, { error: 'recording_not_written', message: outcome.lines[outcome.lines.length - 1] ?? 'nothing was written', ...body });
      },
    },
    'recording/preview': {
      GET: async () => {
        const outcome = await options.write(exchanges, left(), true);
        return { ...status(), ok: outcome.code === 0, summary: outcome.lines, preview: outcome.preview ?? '' };
      },
    },
  };

  return {
    sink,
    routes,
    async finish() {
      active = false;
      if (exchanges.length === 0 && refused === 0 && outside === 0) return undefined;
      return write();
    },
  };
}
