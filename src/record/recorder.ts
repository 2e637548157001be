import { AdminAnswer, type RouteTable } from '../control/admin-api.js';
import { MAX_RECORDED_BODY, type RecordedExchange, type RecordingSink } from './exchange.js';
import type { WriteOutcome } from './write.js';
import { monotonicMicros } from '../workers/ids.js';
import { createInterner } from './intern.js';

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
  /**
   * `record --workers`, in the primary: moves what every worker recorded so far here (and turns their
   * recording on or off as this one is), before each admin call and the final write.
   */
  gather?(active: boolean): Promise<TakenPart[]>;
  /** When an exchange was captured, for the order of several workers' exchanges (default: the machine's monotonic clock). */
  now?(): number;
}

/** What one worker recorded and had not handed over yet: exchanges with their capture time, and the counts of those not kept. */
export interface TakenPart {
  exchanges: Array<{ at: number; exchange: Omit<RecordedExchange, 'seq'> }>;
  refused: number;
  outside: number;
  /** Answers proxied but too large (or undecodable) to keep; absent from a worker of an older build. */
  oversize?: number;
}

/** A recording in progress: the sink the upstream step fills, its admin routes, and a final write. */
export interface Recorder {
  sink: RecordingSink;
  routes: RouteTable;
  /** Writes what is pending, if anything (on stop of the command); undefined when nothing was. */
  finish(): Promise<WriteOutcome | undefined>;
  /** In a worker of `record --workers`: hands over what it recorded (no longer kept here), and turns recording on or off. */
  take(active?: boolean): TakenPart;
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
  /** When each of `exchanges` was captured (see TakenPart). */
  let stamps: number[] = [];
  const now = options.now ?? monotonicMicros;
  // Identical answers (bodies, header strings) are held once however many requests got them.
  const interner = createInterner();
  const forget = (): void => {
    if (exchanges.length === 0) interner.clear();
  };
  let refused = 0;
  let outside = 0;
  let oversize = 0;
  let writing: Promise<WriteOutcome> | undefined;

  const left = () => [
    ...(refused > 0
      ? [
          `${refused} upstream 401/403/429 answer${refused === 1 ? ' was' : 's were'} proxied but not recorded (recording.recordRefusals: true keeps them)`,
        ]
      : []),
    ...(outside > 0 ? [`${outside} request${outside === 1 ? '' : 's'} outside --only`] : []),
    ...(oversize > 0
      ? [
          `${oversize} upstream answer${oversize === 1 ? ' was' : 's were'} proxied but not recorded: over ${MAX_RECORDED_BODY / 1024 / 1024} MiB once decoded, or an encoding that does not decode`,
        ]
      : []),
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
      exchanges.push({ seq: seq++, ...interner.exchange(exchange) });
      stamps.push(now());
    },
    notKept() {
      oversize++;
    },
  };

  /** Takes in what the workers recorded, in the order it was captured (record --workers). */
  async function sync(): Promise<void> {
    if (options.gather === undefined) return;
    const parts = await options.gather(active);
    for (const { exchange } of parts.flatMap((p) => p.exchanges).sort((a, b) => a.at - b.at)) {
      exchanges.push({ seq: seq++, ...interner.exchange(exchange) });
      stamps.push(0);
    }
    for (const part of parts) {
      refused += part.refused;
      outside += part.outside;
      oversize += part.oversize ?? 0;
    }
  }

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
        stamps = stamps.slice(taken.length);
        forget();
        refused = 0;
        outside = 0;
        oversize = 0;
      }
      return outcome;
    } finally {
      writing = undefined;
    }
  }

  const status = () => ({
    recording: active,
    mode: options.mode,
    only: options.only,
    requests: exchanges.length,
    notRecorded: refused + outside,
  });

  const routes: RouteTable = {
    recording: {
      GET: async () => {
        await sync();
        return status();
      },
    },
    'recording/start': {
      POST: async () => {
        active = true;
        await sync();
        return status();
      },
    },
    'recording/stop': {
      POST: async () => {
        active = false;
        await sync();
        const outcome = await write();
        const body = { ...status(), written: outcome.code === 0, summary: outcome.lines };
        return outcome.code === 0
          ? body
          : new AdminAnswer(409, {
              error: 'recording_not_written',
              message: outcome.lines[outcome.lines.length - 1] ?? 'nothing was written',
              ...body,
            });
      },
    },
    'recording/preview': {
      GET: async () => {
        await sync();
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
      await sync();
      if (exchanges.length === 0 && refused === 0 && outside === 0 && oversize === 0) return undefined;
      return write();
    },
    take(on) {
      if (on !== undefined) active = on;
      const part: TakenPart = {
        exchanges: exchanges.map(({ seq: _, ...exchange }, i) => ({ at: stamps[i] ?? 0, exchange })),
        refused,
        outside,
        oversize,
      };
      exchanges = [];
      stamps = [];
      forget();
      refused = 0;
      outside = 0;
      oversize = 0;
      return part;
    },
  };
}
