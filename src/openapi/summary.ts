import type { MergeResult, Drift } from './merge.js';
import type { EventDrift } from './merge-events.js';
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
  for (const u of mapping.unsatisfied)
    lines.push(
      `  ${u.key}: no value made from the ${u.status} response's schema satisfies that schema (its oneOf alternatives overlap?); answered without a body`,
    );
  for (const key of merge.removed) lines.push(`  removed ${key}: no longer in ${spec}`);
  return lines;
}

/**
 * What `--check` prints when it could compare nothing: the description has operations, but each
 * was skipped (most often because the config imported the same description from another path, so
 * every route is held by those endpoints). A check that compares nothing cannot say "in sync".
 */
export function nothingCompared(spec: string, config: string, mapping: Mapping, others: readonly string[]): string[] {
  const named = others.map((o) => JSON.stringify(o)).join(', ');
  const why =
    others.length === 0
      ? `every one of its ${plural(mapping.read, 'operation')} was skipped`
      : `every one of its ${plural(mapping.read, 'operation')} collides with an endpoint ${config} imported from ${named} (its openapiSpec); to check that description, run \`mockapi import ${others[0]} -c ${config} --check\` from the config's folder`;
  return [
    `${config} cannot be checked against ${spec}: nothing was compared; ${why}`,
    ...mapping.skipped.slice(0, 5).map((s) => `  skipped ${s.key}: ${s.reason}`),
    ...(mapping.skipped.length > 5 ? [`  … and ${mapping.skipped.length - 5} more skipped`] : []),
  ];
}

/** The lines `mockapi import --check` prints, and whether the config is out of sync (endpoints and webhook event templates). */
export function driftReport(
  spec: string,
  config: string,
  mapping: Mapping,
  drift: Drift,
  events: EventDrift = { missing: [], stale: [], changed: [] },
  eventCount = 0,
): { lines: string[]; inSync: boolean } {
  const lines: string[] = [];
  for (const e of drift.missing) lines.push(`  missing ${e.key}: in ${spec}, not in ${config}`);
  for (const key of drift.stale) lines.push(`  stale ${key}: imported into ${config}, no longer in ${spec}`);
  for (const key of drift.outdated)
    lines.push(`  changed ${key}: the description now answers differently (an import updates it)`);
  for (const name of events.missing) lines.push(`  missing webhook event ${name}: in ${spec}, not in ${config}`);
  for (const name of events.stale)
    lines.push(`  stale webhook event ${name}: imported into ${config}, no longer in ${spec}`);
  for (const name of events.changed)
    lines.push(`  changed webhook event ${name}: the description now sends other data (an import updates it)`);
  for (const s of mapping.skipped) lines.push(`  skipped ${s.key}: ${s.reason}`);
  const missing = drift.missing.length + events.missing.length;
  const stale = drift.stale.length + events.stale.length;
  const inSync = missing === 0 && stale === 0;
  const counted = `${plural(mapping.endpoints.length, 'operation')}${eventCount > 0 ? `, ${plural(eventCount, 'webhook event')}` : ''}`;
  const head = inSync
    ? `${config} is in sync with ${spec} (${counted})`
    : `${config} is out of sync with ${spec}: ${missing} missing, ${stale} stale; run \`mockapi import ${spec} -c ${config}\` to update it`;
  return { lines: [head, ...lines], inSync };
}
