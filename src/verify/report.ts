import type { Change } from './compare.js';
import type { VerifyResult, Verdict } from './run.js';
import type { Selection } from './select.js';

/** The report of a run, as `--json` prints it (every text already through the redactor). */
export interface VerifyReport {
  upstream: string;
  summary: Record<Verdict, number> & { examples: number; endpoints: number; withoutExample: number };
  results: Array<{
    endpoint: string;
    method: string;
    route: string;
    example: string | null;
    request: string;
    result: Verdict;
    mockStatus?: number;
    upstreamStatus?: number;
    reason?: string;
    changes: Change[];
  }>;
  /** With `--update`: whether it wrote, each drift it did not write (`METHOD path: why`), and its summary lines. */
  update?: { written: boolean; notUpdated: string[]; lines: string[] };
}

/** Strings of any value through `scrub` (keys and values). */
function scrubDeep<T>(value: T, scrub: (text: string) => string): T {
  if (typeof value === 'string') return scrub(value) as T;
  if (Array.isArray(value)) return value.map((v) => scrubDeep(v, scrub)) as T;
  if (value !== null && typeof value === 'object')
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [scrub(k), scrubDeep(v, scrub)])) as T;
  return value;
}

/** The report of `results`, each text passed through `scrub` (the one redactor: credentials, secret shapes, recording.redact). */
export function buildReport(
  upstream: string,
  selection: Selection,
  results: readonly VerifyResult[],
  scrub: (text: string) => string,
): VerifyReport {
  const summary = {
    same: 0,
    drift: 0,
    failed: 0,
    skipped: 0,
    examples: results.length,
    endpoints: new Set(results.map((r) => r.item.endpoint)).size,
    withoutExample: selection.without,
  };
  for (const r of results) summary[r.verdict]++;
  const report: VerifyReport = {
    upstream,
    summary,
    results: results.map((r) => ({
      endpoint: r.item.label,
      method: r.item.endpoint.method,
      route: r.item.endpoint.path,
      example: r.item.example.name ?? null,
      request: r.sent,
      result: r.verdict,
      ...(r.mockStatus === undefined ? {} : { mockStatus: r.mockStatus }),
      ...(r.upstreamStatus === undefined ? {} : { upstreamStatus: r.upstreamStatus }),
      ...(r.reason === undefined ? {} : { reason: r.reason }),
      changes: r.changes,
    })),
  };
  return scrubDeep(report, scrub);
}

const plural = (n: number, word: string) => `${n} ${word}${n === 1 ? '' : 's'}`;

/** The report as a table: one row per example, its changes below a drift, then the counts. */
export function formatTable(report: VerifyReport): string[] {
  const width = Math.max(0, ...report.results.map((r) => r.endpoint.length));
  const lines: string[] = [];
  for (const r of report.results) {
    const head = `${r.result.padEnd(7)}  ${r.endpoint.padEnd(width)}  ${r.request}`;
    if (r.result === 'failed' || r.result === 'skipped') {
      lines.push(`${head}  ${r.reason ?? ''}`.trimEnd());
      continue;
    }
    lines.push(head);
    const pathWidth = Math.max(0, ...r.changes.map((c) => c.path.length));
    for (const c of r.changes) lines.push(`         ${c.path.padEnd(pathWidth)}  ${c.message}`);
  }
  const s = report.summary;
  const counts = [
    `${s.same} same`,
    `${s.drift} drift`,
    `${s.failed} failed`,
    ...(s.skipped > 0 ? [`${s.skipped} skipped`] : []),
  ].join(', ');
  const without = s.withoutExample > 0 ? `; ${plural(s.withoutExample, 'endpoint')} without a verify example` : '';
  lines.push(
    '',
    `${counts}: ${plural(s.examples, 'example')} of ${plural(s.endpoints, 'endpoint')} against ${report.upstream}${without}`,
  );
  return lines;
}
