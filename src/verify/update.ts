import { readFile } from 'node:fs/promises';
import { resolve } from 'node:path';
import type { EndpointConfig } from '../config/types.js';
import { parseExisting } from '../openapi/merge.js';
import { decodePath } from '../record/decode-path.js';
import type { RecordedExchange } from '../record/exchange.js';
import { RECORDED_MARKER } from '../record/render.js';
import { writeRecording } from '../record/write.js';
import type { VerifyResult } from './run.js';

/** What `--update` did: lines for stderr, whether it wrote, and whether every drift was taken in. */
export interface UpdateOutcome {
  /** True when the config was written (some drifts may still be in `notUpdated`). */
  written: boolean;
  /**
   * True when the write was refused or failed, or a drift could not be written (hand-written,
   * imported, a sequence, an answer the recording's merge left out).
   */
  incomplete: boolean;
  /** Each drift that was not written, as `METHOD path: why`. */
  notUpdated: string[];
  lines: string[];
}

/** The recorded endpoints of the config text, as `METHOD path`. */
async function recordedRoutes(file: string): Promise<Set<string> | string> {
  let source: string;
  try {
    source = await readFile(file, 'utf8');
  } catch (err) {
    return `cannot read the config: ${(err as Error).message}`;
  }
  const parsed = parseExisting(source, RECORDED_MARKER);
  if (!parsed.ok) return parsed.reason;
  const routes = new Set<string>();
  for (const item of parsed.config.items) {
    const { method, path } = item.value;
    if (item.key !== undefined && typeof method === 'string' && typeof path === 'string')
      routes.add(`${method.toUpperCase()} ${path}`);
  }
  return routes;
}

/** Why an endpoint that drifted is not updated, or undefined when it is. */
function whyNot(
  endpoint: EndpointConfig,
  recorded: ReadonlySet<string>,
  results: readonly VerifyResult[],
): string | undefined {
  if (!recorded.has(`${endpoint.method} ${endpoint.path}`)) {
    return endpoint.openapi !== undefined
      ? 'imported from an OpenAPI description: import it again to update it'
      : 'written by hand: --update never changes it';
  }
  if (results.length < (endpoint.verify?.length ?? 0))
    return 'only some of its examples were sent (--only): verify all of them to update it';
  if (endpoint.answers?.kind === 'sequence')
    return 'its answers change over time (a sequence): record it again to update it';
  if (endpoint.answers?.kind === 'pick') return 'its answers are picked at random: record it again to update it';
  const bad = results.find((r) => r.verdict !== 'same' && r.verdict !== 'drift');
  if (bad !== undefined) return `its example ${bad.item.label} ${bad.verdict === 'failed' ? 'failed' : 'was not sent'}`;
  return undefined;
}

/** One example's request and the real API's answer, as a recording keeps an exchange. */
function exchangeOf(result: VerifyResult, seq: number): RecordedExchange | undefined {
  const { request, reply } = result;
  if (request === undefined || reply === undefined) return undefined;
  return {
    seq,
    method: request.method,
    path: decodePath(request.path),
    query: Object.fromEntries(new URLSearchParams(request.query)),
    requestHeaders: request.headers,
    ...(request.body === undefined ? {} : { requestBody: request.body }),
    status: reply.status,
    responseHeaders: reply.headers,
    responseBody: reply.body,
  };
}

/**
 * `mockapi verify --update`: the real API's answers to the examples of every recorded endpoint
 * that drifted (all its examples, so answers told apart by `when` stay apart) written through the
 * recording's merge — the same redaction, final scan and atomic write; hand-written and imported
 * endpoints are never touched.
 */
export async function updateDrifted(
  config: string,
  results: readonly VerifyResult[],
  env: Readonly<Record<string, string | undefined>>,
): Promise<UpdateOutcome> {
  const drifted = [...new Set(results.filter((r) => r.verdict === 'drift').map((r) => r.item.endpoint))];
  if (drifted.length === 0)
    return {
      written: false,
      incomplete: false,
      notUpdated: [],
      lines: ['--update: nothing drifted; the config was left unchanged'],
    };
  const recorded = await recordedRoutes(resolve(config));
  if (typeof recorded === 'string')
    return {
      written: false,
      incomplete: true,
      notUpdated: drifted.map((e) => `${e.method} ${e.path}: ${recorded}`),
      lines: [`--update: ${recorded}; nothing was written`],
    };
  const lines: string[] = [];
  const exchanges: RecordedExchange[] = [];
  const notUpdated: string[] = [];
  for (const endpoint of drifted) {
    const own = results.filter((r) => r.item.endpoint === endpoint);
    const why = whyNot(endpoint, recorded, own);
    if (why !== undefined) {
      notUpdated.push(`${endpoint.method} ${endpoint.path}: ${why}`);
      lines.push(`  not updated: ${endpoint.method} ${endpoint.path}: ${why}`);
      continue;
    }
    for (const r of own) {
      const ex = exchangeOf(r, exchanges.length);
      if (ex !== undefined) exchanges.push(ex);
    }
  }
  if (exchanges.length === 0)
    return {
      written: false,
      incomplete: notUpdated.length > 0,
      notUpdated,
      lines: ['--update: no drifted endpoint can be updated; the config was left unchanged', ...lines],
    };
  const outcome = await writeRecording({ config, exchanges, env });
  // An answer the merge left out (one only ever 404, one it could not write) is a drift not taken in.
  notUpdated.push(...(outcome.skipped ?? []));
  return {
    written: outcome.code === 0 && outcome.written === true,
    incomplete: outcome.code !== 0 || notUpdated.length > 0,
    notUpdated,
    lines: ['--update:', ...outcome.lines, ...lines],
  };
}
