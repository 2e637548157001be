import cluster from 'node:cluster';
import { readFile } from 'node:fs/promises';
import { resolve } from 'node:path';
import { formatIssue, parseConfig } from '../../config/load.js';
import type { ServeOptions, StopSignal } from './serve.js';
import { runServe } from './serve.js';
import { EXIT_FAILURE, EXIT_OK, type CommandIO } from './io.js';
import type { Recorder, RecordMode, TakenPart } from '../../record/recorder.js';
import type { RouteTable } from '../../control/admin-api.js';
import type { RecordingServe } from './serve.js';
import type { MockServer } from '../../mock-server.js';

export interface RecordOptions extends ServeOptions {
  mode?: RecordMode;
  only?: string[];
  dryRun?: boolean;
  openapi?: string;
  fromHar?: string;
  upstream?: string;
}

/** A live recording's parts, for one process or for `--workers` (record-workers.ts). */
export interface LiveRecording {
  /** A recorder; `gather` in the primary of `--workers`. */
  recorder(gather?: (active: boolean) => Promise<TakenPart[]>): Recorder;
  /** What the serve of a recording adds: the recorder's sink, and its admin calls (`routes`: answered elsewhere). */
  serving(recorder: Recorder, routes?: RouteTable): RecordingServe;
  /** Writes what is left once the server stopped, and says what was written; the exit code. */
  finish(recorder: Recorder): Promise<number>;
}

/**
 * `mockapi record`: serves as `serve` does while requests no endpoint answers (every request with
 * `--mode all`) go upstream and are recorded; on stop (SIGINT/SIGTERM or `POST
 * /__mockapi/recording/stop`) the recording is written into the config. `--from-har <file>` does the
 * same from a HAR file, without serving.
 */
export async function runRecord(opts: RecordOptions, io: CommandIO, untilStopped: StopSignal): Promise<number> {
  const { writeRecording } = await import('../../record/write.js');
  let openapi: Array<{ method: string; path: string }> | undefined;
  if (opts.openapi !== undefined) {
    const read = await (await import('../../record/openapi-templates.js')).openApiTemplates(opts.openapi);
    if (!read.ok) {
      io.err(`mockapi: ${read.message}`);
      return EXIT_FAILURE;
    }
    openapi = read.templates;
  }
  const report = (outcome: { code: number; lines: string[]; preview?: string }) => {
    for (const line of outcome.lines) io.err(line);
    if (outcome.preview !== undefined && outcome.preview !== '') io.out(outcome.preview.replace(/\r?\n$/, ''));
    return outcome.code;
  };

  if (opts.fromHar !== undefined) {
    const file = resolve(opts.config);
    const loaded = await parseConfig(await readFile(file).catch(() => Buffer.alloc(0)), file);
    if (!loaded.ok) {
      for (const issue of loaded.issues) io.err(formatIssue(issue));
      io.err(`mockapi: ${opts.config} is not valid; nothing was recorded`);
      return EXIT_FAILURE;
    }
    let text: string;
    try {
      text = await readFile(resolve(opts.fromHar), 'utf8');
    } catch (err) {
      io.err(`mockapi: cannot read ${opts.fromHar}: ${(err as Error).message}`);
      return EXIT_FAILURE;
    }
    const { readHar } = await import('../../record/har.js');
    const base = opts.upstream ?? loaded.config.upstream?.url;
    const har = readHar(text, base, loaded.config.recording?.recordRefusals === true);
    if ('error' in har) {
      io.err(`mockapi: cannot read ${opts.fromHar}: ${har.error}`);
      return EXIT_FAILURE;
    }
    const { routeGlob } = await import('../../record/recorder.js');
    const only = (opts.only ?? []).map(routeGlob);
    const kept = har.exchanges.filter((e) => only.length === 0 || only.some((re) => re.test(`${e.method} ${e.path}`)));
    const left = [
      ...har.skipped,
      ...(kept.length < har.exchanges.length ? [`${har.exchanges.length - kept.length} entries outside --only`] : []),
    ];
    return report(await writeRecording({ config: opts.config, exchanges: kept, dryRun: opts.dryRun, openapi, left }));
  }

  const { createRecorder } = await import('../../record/recorder.js');
  let served: MockServer | undefined;
  const live: LiveRecording = {
    recorder: (gather) =>
      createRecorder({
        mode: opts.mode ?? 'new',
        only: opts.only ?? [],
        recordRefusals: () => served?.config.recording?.recordRefusals === true,
        write: (exchanges, left, dryRun) =>
          writeRecording({ config: opts.config, exchanges, dryRun: dryRun || opts.dryRun === true, openapi, left }),
        ...(gather === undefined ? {} : { gather }),
      }),
    serving: (recorder, routes = recorder.routes) => ({
      recording: { sink: recorder.sink, routes },
      requireUpstream: true,
      onStart: (server) => {
        served = server;
        // Once, not once per worker of `--workers` (the first worker says it for all).
        if (!cluster.isWorker || cluster.worker?.id === 1)
          io.err(recordingLine(opts, opts.upstream ?? server.config.upstream?.url ?? '?'));
      },
    }),
    async finish(recorder) {
      const outcome = await recorder.finish();
      if (outcome === undefined) {
        io.err('nothing was recorded; the config was left unchanged');
        return EXIT_OK;
      }
      return report(outcome);
    },
  };
  if (opts.workers !== undefined)
    return (await import('./record-workers.js')).recordWithWorkers(
      { ...opts, workers: opts.workers },
      io,
      untilStopped,
      live,
    );
  const recorder = live.recorder();
  const code = await runServe({ ...opts, workers: undefined }, io, untilStopped, undefined, live.serving(recorder));
  if (code !== EXIT_OK) return code;
  return live.finish(recorder);
}

/**
 * What `record` says when it starts: that it records, from which upstream (without any user and
 * password in its URL), what goes there, and how to write the recording.
 */
export function recordingLine(opts: Pick<RecordOptions, 'mode' | 'only' | 'config'>, upstream: string): string {
  let shown = upstream;
  try {
    const url = new URL(upstream);
    url.username = '';
    url.password = '';
    shown = url.href.replace(/\/$/, '');
  } catch {
    // not a URL: the config check has said so already
  }
  const what = opts.mode === 'all' ? 'every request goes' : 'requests no endpoint answers go';
  const only = opts.only === undefined || opts.only.length === 0 ? '' : ` (only ${opts.only.join(', ')})`;
  return `recording from ${shown}: ${what} there and are recorded${only}; stop with Ctrl-C to write them into ${opts.config}`;
}
