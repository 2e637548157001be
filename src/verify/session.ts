import type { Config, UpstreamConfig } from '../config/types.js';
import { createScrubber } from '../record/scrub.js';
import { buildReport, type VerifyReport } from './report.js';
import { verifyItems, type VerifyResult } from './run.js';
import type { Selection } from './select.js';
import { startMockHost } from './mock-host.js';
import { upstreamTarget, type Target } from './targets.js';

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
}

export type SessionOutcome =
  { report: VerifyReport; results: VerifyResult[]; scrub: (text: string) => string } | { problem: string };

/**
 * One verify run: serves the mock (see verifyServedConfig) from a thread of its own, sends every
 * selected example to it and to the real API, and builds the report — every text in it through
 * the one redactor, which knows the mock's key, the upstream's secret and `recording.redact`.
 */
export async function verifySession(options: SessionOptions): Promise<SessionOutcome> {
  const { config } = options;
  const scrubber = createScrubber([config.apiKey, ...(options.auth?.secrets ?? [])], config.recording);
  const scrub = (text: string) => scrubber.text(text);
  let mock: Target;
  try {
    mock = await startMockHost({
      served: options.served,
      apiKey: config.apiKey,
      basePath: config.server.basePath ?? '/mock',
      connections: options.concurrency,
      timeoutMs: options.upstream.timeoutMs,
    });
  } catch (err) {
    return { problem: `the mock could not be started: ${scrub((err as Error).message)}` };
  }
  const upstream = upstreamTarget(options.upstream, options.auth, options.env);
  try {
    const results = await verifyItems(options.selection.items, {
      upstream,
      mock,
      concurrency: options.concurrency,
      ignore: config.verify?.ignore ?? [],
      secretName: scrubber.secretName,
    });
    return { report: buildReport(options.upstream.url, options.selection, results, scrub), results, scrub };
  } finally {
    await Promise.allSettled([mock.close(), upstream.close()]);
  }
}
