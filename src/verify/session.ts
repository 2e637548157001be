import type { Config, UpstreamConfig } from '../config/types.js';
import { createScrubber } from '../record/scrub.js';
import { buildReport, type VerifyReport } from './report.js';
import { verifyItems, type VerifyResult } from './run.js';
import type { Selection } from './select.js';
import { mockTarget, upstreamTarget } from './targets.js';

/** A mock served for a run: its base URL (`http://127.0.0.1:port`) and how to stop it. */
export interface ServedMock {
  url: string;
  close(): Promise<void>;
}

export interface SessionOptions {
  config: Config;
  /** The config data the run serves (see verifyServedConfig). */
  served: Record<string, unknown>;
  upstream: UpstreamConfig;
  /** `upstream.auth` filled from the environment, and the secrets in it. */
  auth?: { header: string; value: string; secrets: string[] };
  selection: Selection;
  concurrency: number;
  env: Readonly<Record<string, string | undefined>>;
  /**
   * Starts the mock on a loopback port with the given config data (the CLI passes startMockServer);
   * rejects when it cannot.
   */
  serve(data: Record<string, unknown>): Promise<ServedMock>;
}

export type SessionOutcome = { report: VerifyReport; results: VerifyResult[]; scrub: (text: string) => string } | { problem: string };

/**
 * One verify run: serves the mock (see verifyServedConfig), sends every selected example to it and
 * to the real API, and builds the report — every text in it through the one redactor, which knows
 * the mock's key, the upstream's secret and `recording.redact`.
 */
export async function verifySession(options: SessionOptions): Promise<SessionOutcome> {
  const { config } = options;
  const scrubber = createScrubber([config.apiKey, ...(options.auth?.secrets ?? [])], config.recording);
  const scrub = (text: string) => scrubber.text(text);
  let served: ServedMock;
  try {
    served = await options.serve(options.served);
  } catch (err) {
    return { problem: `the mock could not be started: ${scrub((err as Error).message)}` };
  }
  const basePath = config.server.basePath ?? '/mock';
  const mock = mockTarget(served.url, basePath, config.apiKey, options.concurrency);
  const upstream = upstreamTarget(options.upstream, options.auth, options.env);
  try {
    const results = await verifyItems(options.selection.items, { upstream, mock, concurrency: options.concurrency, ignore: config.verify?.ignore ?? [], secretName: scrubber.secretName });
    return { report: buildReport(options.upstream.url, options.selection, results, scrub), results, scrub };
  } finally {
    await Promise.allSettled([mock.close(), upstream.close()]);
    await served.close();
  }
}
