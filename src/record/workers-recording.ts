import type { Worker } from 'node:cluster';
import { AdminAnswer, type RouteTable } from '../control/admin-api.js';
import type { Recorder, TakenPart } from './recorder.js';

/**
 * `mockapi record --workers <n>`: each worker records the exchanges it proxies and keeps them (nothing
 * crosses the IPC channel on a request's path); the primary holds the recording itself. Before each
 * recording admin call, and once more after the workers stopped, the primary takes what every worker
 * recorded (they hand it over and forget it) and writes one config from all of it, in capture order.
 * A recording admin call that reaches a worker is answered by the primary.
 */

/** The recording's admin calls: path under `/__mockapi/`, method. */
const CALLS: ReadonlyArray<readonly [string, string]> = [
  ['recording', 'GET'],
  ['recording/start', 'POST'],
  ['recording/stop', 'POST'],
  ['recording/preview', 'GET'],
];

/** A worker's part as it crosses the channel: bodies as base64 (the channel speaks JSON). */
interface WirePart {
  exchanges: Array<{ at: number; exchange: Record<string, unknown> & { requestBody?: string; responseBody: string } }>;
  refused: number;
  outside: number;
  oversize?: number;
}

type ToPrimary =
  | { type: 'mockapi:rec-call'; call: number; path: string; method: string }
  | { type: 'mockapi:rec-part'; take: number; part: WirePart };
type ToWorker =
  | { type: 'mockapi:rec-answer'; call: number; status: number; body: unknown }
  | { type: 'mockapi:rec-take'; take: number; active: boolean };

/** `take` of the part a worker sends as it stops. */
const FINAL = 0;

function isRecordingMessage(message: unknown): message is ToPrimary | ToWorker {
  const type = (message as { type?: unknown } | null)?.type;
  return typeof type === 'string' && type.startsWith('mockapi:rec-');
}

function encode(part: TakenPart): WirePart {
  return {
    ...part,
    exchanges: part.exchanges.map(({ at, exchange }) => ({
      at,
      exchange: {
        ...exchange,
        requestBody: exchange.requestBody?.toString('base64'),
        responseBody: exchange.responseBody.toString('base64'),
      },
    })),
  };
}

function decode(part: WirePart): TakenPart {
  return {
    refused: part.refused,
    outside: part.outside,
    oversize: part.oversize ?? 0,
    exchanges: part.exchanges.map(({ at, exchange }) => ({
      at,
      exchange: {
        ...(exchange as unknown as TakenPart['exchanges'][number]['exchange']),
        requestBody: exchange.requestBody === undefined ? undefined : Buffer.from(exchange.requestBody, 'base64'),
        responseBody: Buffer.from(exchange.responseBody, 'base64'),
      },
    })),
  };
}

/** The primary's end: see {@link createRecordingPrimary}. */
export interface RecordingPrimary {
  /** Handles a worker's message; false when it is not the recording's. */
  receive(worker: Worker, message: unknown): boolean;
  /** A worker that answers requests: it takes part in every gathering from now on. */
  join(worker: Worker): void;
  /** A worker that is gone: gatherings stop waiting for it. */
  leave(worker: Worker): void;
  /** Takes every worker's recorded exchanges (and what the stopped ones sent), setting their recording on or off. */
  gather(active: boolean): Promise<TakenPart[]>;
  /** The recording whose admin calls the primary answers for the workers. */
  answerWith(routes: RouteTable): void;
}

interface Gathering {
  waiting: Set<Worker>;
  parts: TakenPart[];
  done(parts: TakenPart[]): void;
}

/** The primary's end of a recording over several workers. */
export function createRecordingPrimary(): RecordingPrimary {
  const members = new Set<Worker>();
  const gatherings = new Map<number, Gathering>();
  /** Parts sent by workers as they stopped (or too late for their gathering): taken at the next one. */
  const loose: TakenPart[] = [];
  let routes: RouteTable = {};
  let nextTake = FINAL;
  /** Whether the recording is on, as the last gathering said: a worker that joins later (a replacement) follows it. */
  let active = true;

  const send = (worker: Worker, message: ToWorker): void => {
    if (worker.isConnected()) worker.send(message, ignoreGone);
  };
  const settle = (id: number, g: Gathering): void => {
    if (g.waiting.size > 0) return;
    gatherings.delete(id);
    g.done(g.parts);
  };
  const answer = async (worker: Worker, call: number, path: string, method: string): Promise<void> => {
    const route = routes[path]?.[method];
    let status = 200;
    let body: unknown;
    try {
      if (route === undefined) throw new Error(`no recording call ${method} ${path}`);
      // The recording's calls read nothing of the request: they are called without one.
      const result = await (route as () => unknown)();
      if (result instanceof AdminAnswer) ({ status, body } = result);
      else body = result;
    } catch (err) {
      status = 500;
      body = { error: 'internal_error', message: err instanceof Error ? err.message : String(err) };
    }
    send(worker, { type: 'mockapi:rec-answer', call, status, body });
  };

  return {
    receive(worker, message) {
      if (!isRecordingMessage(message)) return false;
      const m = message as ToPrimary;
      if (m.type === 'mockapi:rec-call') void answer(worker, m.call, m.path, m.method);
      else if (m.type === 'mockapi:rec-part') {
        const g = gatherings.get(m.take);
        if (g !== undefined && g.waiting.delete(worker)) {
          g.parts.push(decode(m.part));
          settle(m.take, g);
        } else loose.push(decode(m.part));
      }
      return true;
    },
    join(worker) {
      members.add(worker);
      // Its (empty) part comes back as a loose one.
      if (!active) send(worker, { type: 'mockapi:rec-take', take: FINAL, active: false });
    },
    leave(worker) {
      members.delete(worker);
      for (const [id, g] of gatherings) if (g.waiting.delete(worker)) settle(id, g);
    },
    gather(on) {
      active = on;
      const id = ++nextTake;
      return new Promise((done) => {
        const g: Gathering = {
          waiting: new Set([...members].filter((w) => w.isConnected())),
          parts: loose.splice(0),
          done,
        };
        gatherings.set(id, g);
        for (const worker of g.waiting) send(worker, { type: 'mockapi:rec-take', take: id, active: on });
        settle(id, g);
      });
    },
    answerWith(table) {
      routes = table;
    },
  };
}

/** A worker's end: see {@link joinRecordingWorkers}. */
export interface RecordingWorker {
  /** The recording's admin calls, answered by the primary. */
  routes: RouteTable;
  /** Hands what is left to the primary as the worker stops (after its server closed); resolves once sent. */
  final(): Promise<void>;
  close(): void;
}

/** In a worker of `record --workers`: hands `recorder`'s exchanges to the primary when it asks. Undefined outside a worker. */
export function joinRecordingWorkers(recorder: Recorder): RecordingWorker | undefined {
  const send = process.send?.bind(process);
  if (send === undefined) return undefined;
  const post = (message: ToPrimary, done?: () => void): void => {
    if (process.connected) send(message, undefined, {}, () => done?.());
    else done?.();
  };
  let nextCall = 0;
  const pending = new Map<number, (answer: { status: number; body: unknown }) => void>();
  const onMessage = (message: unknown): void => {
    if (!isRecordingMessage(message)) return;
    const m = message as ToWorker;
    if (m.type === 'mockapi:rec-take')
      post({ type: 'mockapi:rec-part', take: m.take, part: encode(recorder.take(m.active)) });
    else if (m.type === 'mockapi:rec-answer') {
      pending.get(m.call)?.(m);
      pending.delete(m.call);
    }
  };
  const release = (): void => {
    for (const done of pending.values())
      done({ status: 503, body: { error: 'recording_unavailable', message: 'the server is stopping' } });
    pending.clear();
  };
  process.on('message', onMessage);
  process.on('disconnect', release);

  const ask = (path: string, method: string) => (): Promise<unknown> =>
    new Promise<{ status: number; body: unknown }>((done) => {
      if (!process.connected)
        return done({ status: 503, body: { error: 'recording_unavailable', message: 'the server is stopping' } });
      const call = ++nextCall;
      pending.set(call, done);
      post({ type: 'mockapi:rec-call', call, path, method });
    }).then((a) => (a.status === 200 ? a.body : new AdminAnswer(a.status, a.body)));
  const routes: RouteTable = {};
  for (const [path, method] of CALLS) routes[path] = { ...routes[path], [method]: ask(path, method) };

  return {
    routes,
    final: () =>
      new Promise<void>((done) =>
        post({ type: 'mockapi:rec-part', take: FINAL, part: encode(recorder.take(false)) }, done),
      ),
    close() {
      process.off('message', onMessage);
      process.off('disconnect', release);
      release();
    },
  };
}

/** What a send to a worker that has gone away ends in: nothing to do. */
function ignoreGone(): void {}
