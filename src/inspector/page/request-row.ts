// One request in the inspector's list: whether it passes the filters (the search box, status,
// step, endpoint) and the row that shows it, with its duration.
import type { Entry } from './api.js';
import { h } from './dom.js';
import { STEP_LABELS } from './trace.js';

/** The list's filters, as the form gives them (the search text in lower case). */
export interface Filters {
  text: string;
  status: string;
  step: string;
  endpoint: string;
}

/** Whether `e` passes the list's filters. */
export function matchesFilters(e: Entry, filters: Filters): boolean {
  if (filters.status !== '' && !String(e.status).startsWith(filters.status)) return false;
  if (filters.step !== '' && e.step !== filters.step) return false;
  if (filters.endpoint !== '' && e.endpoint !== filters.endpoint) return false;
  if (filters.text === '') return true;
  // A status typed in the box (`429`, `4xx`) is a status filter, not a search for the digits anywhere.
  const status = /^([1-5])(\d\d|xx)$/.exec(filters.text);
  if (status !== null)
    return status[2] === 'xx' ? String(e.status).charAt(0) === status[1] : String(e.status) === filters.text;
  const hay = [
    e.method,
    e.path,
    String(e.status),
    e.endpoint ?? '',
    e.response ?? '',
    e.step,
    e.body,
    ...e.notes,
    ...Object.entries(e.headers).map(([k, v]) => `${k}: ${v}`),
    ...Object.entries(e.query).map(([k, v]) => `${k}=${String(v)}`),
  ];
  return hay.join('\n').toLowerCase().includes(filters.text);
}

/** The list's row of a request. */
export function requestRow(e: Entry): HTMLLIElement {
  const why = [STEP_LABELS[e.step] ?? e.step, e.endpoint, e.response, ...e.notes]
    .filter((x) => x !== null && x !== '')
    .join(' · ');
  const row = h(
    'li',
    // One line a request; why it got its answer is the row's tooltip (and the detail's first section).
    {
      role: 'option',
      id: `req-${e.id}`,
      'data-id': e.id,
      'aria-selected': 'false',
      title: `${e.method} ${e.path} → ${e.status}: ${why}`,
    },
    h('span', { class: `status s${String(e.status).charAt(0)}` }, e.status),
    h('span', { class: 'method' }, e.method),
    h('span', { class: 'path mono' }, e.path),
    h('span', { class: 'ms' }, durationText(e.ms)),
    h('span', { class: 'when' }, new Date(e.time).toLocaleTimeString()),
  );
  return row;
}

/** A request's duration for its row: `0.4 ms`, `12 ms`, `1.5 s`. */
export function durationText(ms: number): string {
  if (ms < 10) return `${(Math.round(ms * 10) / 10).toString()} ms`;
  if (ms < 1000) return `${Math.round(ms)} ms`;
  return `${(Math.round(ms / 100) / 10).toString()} s`;
}
