import cluster from 'node:cluster';
import { createRecordingPrimary, joinRecordingWorkers } from '../../record/workers-recording.js';
import { EXIT_OK, type CommandIO } from './io.js';
import type { LiveRecording, RecordOptions } from './record.js';
import { runServe, type StopSignal } from './serve.js';
import { serveWithWorkers } from './serve-workers.js';

/**
 * `mockapi record --workers <n>`: n processes on one port, as `serve --workers`. Each worker records
 * what it proxies and keeps it; the primary holds the recording. The recording's admin calls, on
 * whichever worker they arrive, are answered by the primary, which first takes every worker's
 * exchanges (record/workers-recording.ts); on stop, each worker hands over what is left once its server
 * closed, and the primary writes one config from all of them.
 */
export async function recordWithWorkers(
  opts: RecordOptions & { workers: number },
  io: CommandIO,
  untilStopped: StopSignal,
  live: LiveRecording,
): Promise<number> {
  if (cluster.isPrimary) {
    const primary = createRecordingPrimary();
    const recorder = live.recorder(primary.gather);
    primary.answerWith(recorder.routes);
    const code = await serveWithWorkers(opts, io, untilStopped, runServe, primary);
    if (code !== EXIT_OK) return code;
    return live.finish(recorder);
  }
  const recorder = live.recorder();
  const joined = joinRecordingWorkers(recorder);
  return serveWithWorkers(opts, io, untilStopped, async (one, oneIo, stopped, announce) => {
    try {
      return await runServe(one, oneIo, stopped, announce, live.serving(recorder, joined?.routes));
    } finally {
      // Every exchange this worker proxied, in-flight ones included: its server has closed.
      await joined?.final();
      joined?.close();
    }
  });
}
