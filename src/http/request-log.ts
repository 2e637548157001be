import picocolors from 'picocolors';
import { NO_REDACTOR, type Redactor } from '../redact/redactor.js';
import { isoTime } from '../iso-time.js';

/** `pretty`: one readable line per request; `json`: one JSON object per line; `off`: nothing. */
export type LogFormat = 'pretty' | 'json' | 'off';

/**
 * What is logged about a request — deliberately never headers or the query string; the keys are
 * scrubbed from what is printed (method, path, note) in every form a client may have written them.
 */
export interface RequestLogEntry {
  method: string;
  /** Full request path including `/mock`, without the query string (one is cut off if present). */
  path: string;
  status: number;
  durationMs: number;
  /** Our own words, e.g. "did you mean GET /users/:id?", "simulated failure", "rate limited". */
  note?: string;
}

export interface RequestLogger {
  /** False for `off`: the handler then builds no entry and takes no timing at all. */
  readonly enabled: boolean;
  /** Queues one line; it is written at the end of the current event-loop turn. */
  log(entry: RequestLogEntry): void;
  /** Writes every queued line now (used on shutdown). */
  flush(): void;
  /** Flushes, stops accepting lines and resolves once the stream has drained (or after a timeout). */
  close(): Promise<void>;
}

export interface RequestLoggerOptions {
  format: LogFormat;
  /** Usually process.stdout. Never ended by the logger. */
  stream: NodeJS.WritableStream;
  /** ANSI colours in `pretty` format; the CLI decides from isTTY and NO_COLOR. */
  color?: boolean;
  /** Milliseconds since the epoch, for the time column. */
  clock?: () => number;
  /** Queued characters that trigger a write before the turn ends. Default 64 KiB. */
  flushThreshold?: number;
  /** Most characters kept queued while the stream applies backpressure; lines beyond are dropped. Default 8 MiB. */
  bufferLimit?: number;
  /** How long close() waits for the stream to drain. Default 2000 ms. */
  closeTimeoutMs?: number;
  /** The redactor of the config served now (read for each line, so a rotation takes effect at once). */
  redactor?: () => Redactor;
}

const offLogger: RequestLogger = { enabled: false, log() {}, flush() {}, close: async () => {} };

/**
 * Creates the request logger. Lines are batched: appended to a string and written once per
 * event-loop turn (or as soon as 64 KiB are queued), because a synchronous write per request to a
 * pipe or terminal blocks the event loop. When the stream signals backpressure (`write()` returns
 * false), lines keep being queued up to `bufferLimit`; beyond that they are dropped and counted,
 * and an "N log lines dropped" line follows once the stream drains — so logging never blocks the
 * server or grows memory without bound. A stream error (e.g. EPIPE when the reader went away)
 * turns the logger off instead of crashing the server.
 */
export function createRequestLogger(options: RequestLoggerOptions): RequestLogger {
  if (options.format === 'off') return offLogger;
  const { stream } = options;
  const redactor = options.redactor ?? (() => NO_REDACTOR);
  const scrub = (text: string): string => redactor().scrub(text);
  const format =
    options.format === 'json' ? createJsonFormatter(scrub) : createPrettyFormatter(options.color ?? false, scrub);
  const clock = options.clock ?? Date.now;
  const flushThreshold = options.flushThreshold ?? 64 * 1024;
  const bufferLimit = options.bufferLimit ?? 8 * 1024 * 1024;
  const closeTimeoutMs = options.closeTimeoutMs ?? 2000;

  let pending = '';
  let dropped = 0;
  /** A 'drain' listener is registered: the stream said stop, so lines only queue up. */
  let waiting = false;
  let closed = false;
  let broken = false;
  let tick: NodeJS.Immediate | undefined;

  function writeQueue(): void {
    if (broken) return;
    if (dropped > 0) {
      pending += format.dropped(dropped, clock());
      dropped = 0;
    }
    if (pending === '') return;
    const chunk = pending;
    pending = '';
    let accepted: boolean;
    try {
      accepted = stream.write(chunk);
    } catch {
      return onError();
    }
    if (!accepted && !waiting && !broken) {
      waiting = true;
      stream.once('drain', onDrain);
    }
  }

  function onTick(): void {
    tick = undefined;
    if (!waiting) writeQueue();
  }

  function onDrain(): void {
    waiting = false;
    writeQueue();
  }

  function onError(): void {
    broken = true;
    pending = '';
  }
  stream.on('error', onError);

  function log(entry: RequestLogEntry): void {
    if (closed || broken) return;
    const line = format.line(entry, clock());
    if (pending.length + line.length > bufferLimit) {
      dropped++;
      // Only a single line larger than the limit gets here without backpressure: report it soon.
      if (!waiting) tick ??= setImmediate(onTick);
      return;
    }
    pending += line;
    if (waiting) return;
    if (pending.length >= flushThreshold) writeQueue();
    else tick ??= setImmediate(onTick);
  }

  /** Writes the queue even while waiting for 'drain': on shutdown the stream's own buffer takes it. */
  function flush(): void {
    writeQueue();
  }

  async function close(): Promise<void> {
    if (closed) return;
    flush();
    closed = true;
    if (tick) clearImmediate(tick);
    tick = undefined;
    if (waiting && !broken) await waitForDrain(stream, closeTimeoutMs);
    stream.removeListener('drain', onDrain);
    stream.removeListener('error', onError);
  }

  return { enabled: true, log, flush, close };
}

function waitForDrain(stream: NodeJS.WritableStream, timeoutMs: number): Promise<void> {
  return new Promise((resolve) => {
    const done = (): void => {
      clearTimeout(timer);
      stream.removeListener('drain', done);
      stream.removeListener('error', done);
      stream.removeListener('close', done);
      resolve();
    };
    const timer = setTimeout(done, timeoutMs);
    stream.once('drain', done);
    stream.once('error', done);
    stream.once('close', done);
  });
}

interface Formatter {
  line(entry: RequestLogEntry, now: number): string;
  dropped(count: number, now: number): string;
}

function createPrettyFormatter(color: boolean, scrub: (text: string) => string): Formatter {
  const colors = picocolors.createColors(color);
  const statusText: string[] = [];
  let second = NaN;
  let time = '';

  function clockText(now: number): string {
    const current = Math.floor(now / 1000);
    if (current !== second) {
      second = current;
      const date = new Date(now);
      time = colors.dim(`${pad2(date.getHours())}:${pad2(date.getMinutes())}:${pad2(date.getSeconds())}`);
    }
    return time;
  }

  function statusOf(status: number): string {
    let text = statusText[status];
    if (text === undefined) {
      const paint =
        status >= 500
          ? colors.red
          : status >= 400
            ? colors.yellow
            : status >= 300
              ? colors.cyan
              : status >= 200
                ? colors.green
                : colors.reset;
      text = paint(String(status));
      if (Number.isInteger(status) && status >= 0 && status < 1000) statusText[status] = text;
    }
    return text;
  }

  return {
    line(entry, now) {
      const note = entry.note === undefined || entry.note === '' ? '' : ` (${printable(scrub(entry.note))})`;
      return `${clockText(now)} ${printable(scrub(entry.method))} ${printable(scrub(withoutQuery(entry.path)))} ${statusOf(entry.status)} ${Math.round(milliseconds(entry.durationMs))}ms${note}\n`;
    },
    dropped(count, now) {
      return `${clockText(now)} ${colors.yellow(droppedMessage(count))}\n`;
    },
  };
}

function createJsonFormatter(scrub: (text: string) => string): Formatter {
  return {
    line(entry, now) {
      const note = entry.note === undefined ? '' : `,"note":${JSON.stringify(scrub(entry.note))}`;
      const ms = Math.round(milliseconds(entry.durationMs) * 1000) / 1000;
      return `{"time":"${isoTime(now)}","method":${JSON.stringify(scrub(entry.method))},"path":${JSON.stringify(scrub(withoutQuery(entry.path)))},"status":${entry.status},"ms":${ms}${note}}\n`;
    },
    dropped(count, now) {
      return `{"time":"${isoTime(now)}","dropped":${count},"message":"${droppedMessage(count)}"}\n`;
    },
  };
}

function droppedMessage(count: number): string {
  return `${count} log ${count === 1 ? 'line' : 'lines'} dropped (output too slow)`;
}

/** A query string may carry an API key; it never reaches the log even if a caller passes one. */
function withoutQuery(path: string): string {
  const query = path.indexOf('?');
  return query === -1 ? path : path.slice(0, query);
}

function milliseconds(value: number): number {
  return Number.isFinite(value) && value > 0 ? value : 0;
}

// eslint-disable-next-line no-control-regex
const CONTROL = /[\u0000-\u001f\u007f-\u009f]/;
// eslint-disable-next-line no-control-regex
const CONTROL_ALL = /[\u0000-\u001f\u007f-\u009f]/g;

/** Escapes control characters so a crafted path cannot move the cursor or forge lines. */
function printable(text: string): string {
  return CONTROL.test(text) ? text.replace(CONTROL_ALL, escapeControl) : text;
}

function escapeControl(char: string): string {
  return `\\x${char.charCodeAt(0).toString(16).padStart(2, '0')}`;
}

function pad2(value: number): string {
  return value < 10 ? `0${value}` : String(value);
}
