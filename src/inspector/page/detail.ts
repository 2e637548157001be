import type { Entry, Usage } from './api.js';
import { curlOf } from './curl.js';
import { append, copyText, h, toast, type Child } from './dom.js';
import { streamTimeline } from './stream-timeline.js';
import { traceOf, type KeyPlace } from './trace.js';

/** Renders one request into the detail pane: trace first (the question people come with), then the rest. */
export function renderDetail(
  pane: HTMLElement,
  entry: Entry,
  usage: Usage | undefined,
  accept?: readonly KeyPlace[],
  openDelivery?: (id: string) => void,
): void {
  const curl = curlOf(entry, location.origin);
  const query = Object.entries(entry.query);
  pane.replaceChildren();
  append(pane, [
    h(
      'h2',
      null,
      h('span', { class: 'method' }, entry.method),
      ' ',
      entry.path,
      ' ',
      h('span', { class: `status s${String(entry.status).charAt(0)}` }, '→ ', entry.status),
    ),
    h(
      'div',
      { class: 'meta' },
      h('span', null, `#${entry.id}`),
      h('span', null, new Date(entry.time).toLocaleString()),
      h('span', null, `${entry.ms} ms`),
      h('span', null, `step: ${entry.step}`),
    ),
    h('h3', null, 'Why this answer'),
    h('ol', { class: 'trace', id: 'trace' }, ...traceOf(entry, usage, accept).map((line) => h('li', null, line))),
    h('h3', null, 'Answer'),
    table([
      ['status', String(entry.status)],
      ['endpoint', entry.endpoint ?? '— none'],
      ['answer', entry.response ?? '— none'],
      [
        'credential',
        `${entry.credential.via}${entry.credential.name === undefined ? '' : ` ${entry.credential.name}`}, key: ${entry.credential.key}${entry.credential.keyName === undefined ? '' : ` (${entry.credential.keyName})`}`,
      ],
    ]),
    ...streamTimeline(entry),
    ...deliveriesPart(entry, openDelivery),
    ...answerPart(entry),
    h('h3', null, 'cURL'),
    h(
      'div',
      { class: 'row' },
      h('button', { type: 'button', id: 'copy-curl', onclick: () => void copyCurl(curl) }, 'Copy as cURL'),
      h('span', { class: 'muted' }, 'the key is $MOCKAPI_KEY'),
    ),
    h('pre', { class: 'block', id: 'curl' }, curl),
    query.length > 0 ? h('h3', null, 'Query') : null,
    query.length > 0 ? table(query.map(([k, v]) => [k, Array.isArray(v) ? v.join(', ') : v])) : null,
    h('h3', null, 'Request headers'),
    table(Object.entries(entry.headers)),
    h('h3', null, 'Request body', entry.bodyTruncated ? ' (first 64 KiB)' : ''),
    entry.body === ''
      ? h('p', { class: 'muted' }, 'no body')
      : h('pre', { class: 'block', id: 'body' }, pretty(entry.body)),
  ]);
}

/** The webhook deliveries the answer caused (named in the journal entry's notes), each a link to the Webhooks view. */
function deliveriesPart(entry: Entry, open: ((id: string) => void) | undefined): Child[] {
  const sent = entry.notes.map((note) => /^webhook (.+) → (.+): (whd_\d+)$/.exec(note)).filter((m) => m !== null);
  if (sent.length === 0 || open === undefined) return [];
  return [
    h('h3', null, 'Webhooks sent'),
    h(
      'ul',
      { id: 'deliveries' },
      ...sent.map(([, event, target, id]) =>
        h(
          'li',
          null,
          h('button', { type: 'button', class: 'quiet', 'data-delivery': id, onclick: () => open(id as string) }, id),
          ` ${event} → ${target}`,
        ),
      ),
    ),
  ];
}

/** The answer's headers and body as the journal kept them (nothing from a server that keeps none). */
function answerPart(entry: Entry): Child[] {
  if (entry.responseHeaders === undefined) return [];
  const body = entry.responseBody ?? '';
  return [
    // The journal keeps the answer the request was given; a fault wrote something else (or nothing).
    entry.step === 'fault'
      ? h(
          'p',
          { class: 'muted', id: 'answer-fault' },
          'A configured fault replaced or cut this answer on the wire: see the server note above.',
        )
      : null,
    h('h3', null, 'Answer headers'),
    h('div', { id: 'answer-headers' }, table(Object.entries(entry.responseHeaders))),
    h('h3', null, 'Answer body', entry.responseBodyTruncated === true ? ' (first 64 KiB)' : ''),
    body === ''
      ? h('p', { class: 'muted', id: 'answer-body' }, 'no body')
      : h('pre', { class: 'block', id: 'answer-body' }, pretty(body)),
  ];
}

/** Copies the request as cURL and says so. */
export async function copyCurl(curl: string): Promise<void> {
  await copyText(curl);
  toast('Copied as cURL (set MOCKAPI_KEY first)');
}

/** Rows of name and value, or `none`. */
export function table(rows: [string, string][]): Child {
  if (rows.length === 0) return h('p', { class: 'muted' }, 'none');
  return h(
    'table',
    { class: 'kv' },
    h('tbody', null, ...rows.map(([k, v]) => h('tr', null, h('td', null, k), h('td', null, v)))),
  );
}

/** A JSON body indented; any other text as it is. */
export function pretty(body: string): string {
  try {
    return JSON.stringify(JSON.parse(body), null, 2);
  } catch {
    return body;
  }
}
