import type { MergeResult, Drift } from './merge.js';
import type { Mapping } from './operations.js';

const plural = (n: number, noun: string): string => `${n} ${noun}${n === 1 ? '' : 's'}`;

/** The lines `mockapi import` prints on stderr: counts first, then each skipped and removed operation. */
export function importSummary(spec: string, config: string, mapping: Mapping, merge: MergeResult): string[] {
  const generated = mapping.endpoints.filter((e) => e.generated).length;
  const lines = [
    `${spec}: ${plural(mapping.read, 'operation')} read, ${mapping.endpoints.length} written to ${config} ` +
      `(${merge.added} new, ${merge.updated} updated, ${merge.unchanged} unchanged), ${generated} generated from schemas, ${mapping.skipped.length} skipped`,
  ];
  for (const s of mapping.skipped) lines.push(`  skipped ${s.key}: ${s.reason}`);
  for (const key of merge.removed) lines.push(`  removed ${key}: no longer in ${spec}`);
  return lines;
}

/** The lines `mockapi import --check` prints, and whether the config is out of sync. */
export function driftReport(spec: string, config: string, mapping: Mapping, drift: Drift): { lines: string[]; inSync: boolean } {
  const lines: string[] = [];
  for (const e of drift.missing) lines.push(`  missing ${e.key}: in ${spec}, not in ${config}`);
  for (const key of drift.stale) lines.push(`  stale ${key}: imported into ${config}, no longer in ${spec}`);
  for (const key of drift.outdated) lines.push(`  changed ${key}: the description now answers differently (an import updates it)`);
  for (const s of mapping.skipped) lines.push(`  skipped ${s.key}: ${s.reason}`);
  const inSync = drift.missing.length === 0 && drift.stale.length === 0;
  const head = inSync
    ? `${config} is in sync with ${spec} (${plural(mapping.endpoints.length, 'operation')})`
    : `${config} is out of sync with ${spec}: ${drift.missing.length} missing, ${drift.stale.length} stale; run \`mockapi import ${spec} -c ${config}\` to update it`;
  return { lines: [head, ...lines], inSync };
}
