import { resolve } from 'node:path';
import { DEFAULT_UPSTREAM_TIMEOUT_MS } from '../../config/build.js';
import { formatIssue, readConfigFile } from '../../config/load.js';
import type { Config, UpstreamConfig } from '../../config/types.js';
import { EXIT_FAILURE, EXIT_OK, type CommandIO } from './io.js';

export interface VerifyOptions {
  config: string;
  upstream?: string;
  only?: string[];
  json?: boolean;
  allowUnsafe?: boolean;
  update?: boolean;
  /** Milliseconds (`--timeout`), over `upstream.timeout`. */
  timeout?: number;
  concurrency?: number;
}

/** Examples in flight at once by default: gentle on a provider's sandbox and its rate limit. */
export const DEFAULT_CONCURRENCY = 4;

/** The upstream a run verifies against: `--upstream` over `upstream.url`, `--timeout` over `upstream.timeout`. */
function upstreamOf(config: Config, opts: VerifyOptions): UpstreamConfig | undefined {
  const url = opts.upstream ?? config.upstream?.url;
  if (url === undefined) return undefined;
  const base = config.upstream ?? { headers: {}, timeoutMs: DEFAULT_UPSTREAM_TIMEOUT_MS, fallthrough: false };
  return { ...base, url: url.replace(/\/+$/, ''), timeoutMs: opts.timeout ?? base.timeoutMs };
}

/**
 * `mockapi verify`: sends each endpoint's `verify:` examples to the real API (with `upstream.auth`)
 * and to the mock (served in this process on a loopback port), compares the answers' shapes and
 * prints a report; `--update` writes what drifted through the recording's merge. Exit 0 when every
 * example is the same, 1 on drift, failure or a config problem.
 */
export async function runVerify(
  opts: VerifyOptions,
  io: CommandIO,
  env: Readonly<Record<string, string | undefined>> = process.env,
): Promise<number> {
  const read = await readConfigFile(resolve(opts.config));
  const { loadForVerify } = await import('../../verify/served-data.js');
  const loaded = read.ok ? await loadForVerify(read.bytes, opts.config) : read;
  if (!loaded.ok) {
    for (const issue of loaded.issues) io.err(formatIssue(issue));
    io.err(`mockapi: ${opts.config} is not valid; nothing was verified`);
    return EXIT_FAILURE;
  }
  const { config } = loaded;
  const upstream = upstreamOf(config, opts);
  if (upstream === undefined) {
    io.err(`mockapi: no real API to verify against: give --upstream <url> or set upstream.url in ${opts.config}`);
    return EXIT_FAILURE;
  }
  const { resolveAuthValue } = await import('../../config/auth-value.js');
  const auth = config.upstream?.auth === undefined ? undefined : resolveAuthValue(config.upstream.auth.value, env);
  if (auth !== undefined && auth.missing.length > 0) {
    io.err(
      `mockapi: upstream.auth reads ${auth.missing.join(', ')}, which ${auth.missing.length === 1 ? 'is' : 'are'} not set in the environment; nothing was verified`,
    );
    return EXIT_FAILURE;
  }
  const { selectExamples } = await import('../../verify/select.js');
  const selection = selectExamples(config, opts.only ?? [], opts.allowUnsafe === true);
  if (selection.items.length === 0) {
    io.err(
      (opts.only ?? []).length > 0
        ? `mockapi: no verify example matches --only ${(opts.only ?? []).join(', ')}`
        : `mockapi: no endpoint of ${opts.config} has a verify example (mockapi record and mockapi import write them; or add verify: to an endpoint)`,
    );
    return EXIT_FAILURE;
  }
  const { verifySession } = await import('../../verify/session.js');
  const outcome = await verifySession({
    config,
    served: loaded.served,
    upstream,
    auth:
      auth === undefined
        ? undefined
        : { header: (config.upstream?.auth as { header: string }).header, value: auth.value, secrets: auth.secrets },
    selection,
    concurrency: opts.concurrency ?? DEFAULT_CONCURRENCY,
    env,
  });
  if ('problem' in outcome) {
    io.err(`mockapi: ${outcome.problem}; nothing was verified`);
    return EXIT_FAILURE;
  }
  const { report, results, scrub } = outcome;
  let failedUpdate = false;
  if (opts.update === true) {
    const { updateDrifted } = await import('../../verify/update.js');
    const update = await updateDrifted(opts.config, results, env);
    report.update = {
      written: update.written,
      notUpdated: update.notUpdated.map(scrub),
      lines: update.lines.map(scrub),
    };
    failedUpdate = update.incomplete;
  }
  const { formatTable } = await import('../../verify/report.js');
  if (opts.json === true) io.out(JSON.stringify(report, null, 2));
  else for (const line of formatTable(report)) io.out(line);
  for (const line of report.update?.lines ?? []) io.err(line);
  if (report.summary.failed > 0) return EXIT_FAILURE;
  if (opts.update === true) return failedUpdate ? EXIT_FAILURE : EXIT_OK;
  return report.summary.drift > 0 ? EXIT_FAILURE : EXIT_OK;
}
