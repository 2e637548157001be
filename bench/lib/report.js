// The figures of a run: each recorded with its ratio or value, its target and PASS/FAIL, and printed
// as one table at the end (bench/run.js).
import { progress } from './options.js';

export const results = [];

/**
 * Records a figure. `check`: `{ ratio, min }` or `{ ratio, max }` (a ratio against a baseline of
 * this run), or `{ value, max }` (an absolute bound). Without `check` the figure is information.
 */
export function record(name, shown, check, note) {
  let verdict = '';
  let target = '';
  let ratio = '';
  if (check !== undefined) {
    const measured = check.ratio ?? check.value;
    if ('ratio' in check) ratio = `${check.ratio.toFixed(2)}×`;
    if (check.min !== undefined) {
      target = 'ratio' in check ? `≥ ${check.min}×` : `≥ ${check.min}`;
      verdict = measured >= check.min ? 'PASS' : 'FAIL';
    } else if (check.max !== undefined) {
      target = 'ratio' in check ? `≤ ${check.max}×` : `≤ ${check.max}${check.unit ?? ''}`;
      verdict = measured <= check.max ? 'PASS' : 'FAIL';
    }
    if (check.invalid) verdict = 'FAIL';
  }
  results.push({ name, shown, target, ratio, verdict, note: note ?? '' });
  progress(
    `${verdict ? `${verdict} ` : ''}${name}: ${shown}${ratio ? ` (${ratio}, target ${target})` : target ? ` (target ${target})` : ''}${note ? ` — ${note}` : ''}`,
  );
}

export function printTable() {
  const rows = [
    ['figure', 'measured', 'ratio', 'target', 'result'],
    ...results.map((r) => [r.name, r.shown, r.ratio, r.target, r.verdict]),
  ];
  const widths = rows[0].map((_, col) => Math.max(...rows.map((row) => row[col].length)));
  const line = (row) => `| ${row.map((cell, col) => cell.padEnd(widths[col])).join(' | ')} |`;
  const out = [line(rows[0]), `|${widths.map((w) => '-'.repeat(w + 2)).join('|')}|`, ...rows.slice(1).map(line)];
  const notes = results.filter((r) => r.note !== '').map((r) => `- ${r.name}: ${r.note}`);
  process.stdout.write(`\n${out.join('\n')}\n${notes.length > 0 ? `\n${notes.join('\n')}\n` : ''}`);
}

export const fmtRps = (rps) => `${Math.round(rps).toLocaleString('en-US')} req/s`;
export const fmtMs = (ms) => (ms < 10 ? `${ms.toFixed(2)} ms` : `${Math.round(ms)} ms`);
export const fmtMb = (mb) => `${mb.toFixed(1)} MB`;
