import { api, type Delivery, type WebhookTarget } from './api.js';
import { pretty, table } from './detail.js';
import { append, byId, h, toast } from './dom.js';

/** The page keeps at most this many deliveries (the delivery log's default size). */
const KEEP = 1000;

/**
 * The Webhooks view: the targets with their counts, the deliveries (newest first, live from the
 * `webhook` event) and the selected one's attempts, headers (signatures; never a secret: the server
 * scrubs them) and body, with a Replay button (`POST /__mockapi/webhooks/deliveries/<id>/replay`).
 */
export function createWebhooksView() {
  const list = byId<HTMLOListElement>('wh-list');
  const detail = byId('wh-detail');
  const hint = [...detail.childNodes];
  const deliveries = new Map<string, Delivery>();
  const rows = new Map<string, HTMLLIElement>();
  let selected: string | undefined;
  let targets: Promise<void> | null = null;
  let targetsStale = false;
  const num = (id: string): number => Number(id.slice(4));
  /**
   * How far a delivery has got: attempts only grow and the status leaves `pending` once, so a copy
   * with less progress is older. The log, the replay answer and the event stream race each other
   * (a `webhook` event can arrive before the answer that read an earlier state), and the page keeps
   * the furthest copy rather than the last to arrive.
   */
  const progress = (d: Delivery): number => d.attempts.length * 2 + (d.status === 'pending' ? 0 : 1);

  function rowOf(d: Delivery): HTMLLIElement {
    const last = d.attempts.at(-1);
    const code = last?.status ?? (d.status === 'pending' ? '…' : '—');
    return h(
      'li',
      {
        role: 'option',
        id: `wh-${d.id}`,
        'data-id': d.id,
        'aria-selected': String(d.id === selected),
        title: `${d.id} ${d.event} → ${d.target}: ${d.status}${d.error === null ? '' : ` (${d.error})`}`,
      },
      h('span', { class: `status s${String(code).charAt(0)}` }, code),
      h('span', { class: 'method' }, d.status),
      h('span', { class: 'path mono' }, `${d.event} → ${d.target}`),
      h('span', { class: 'ms' }, `${d.attempts.length} attempt${d.attempts.length === 1 ? '' : 's'}`),
      h('span', { class: 'when' }, d.id),
    );
  }

  function render(d: Delivery): void {
    const replay = h(
      'button',
      {
        type: 'button',
        id: 'wh-replay',
        title: `Send it again, same event id, signed anew (POST /__mockapi/webhooks/deliveries/${d.id}/replay)`,
      },
      'Replay',
    );
    replay.addEventListener('click', () => {
      replay.disabled = true;
      api.replayDelivery(d.id).then(
        (copy) => {
          toast(`Replayed ${d.id} as ${copy.id}`);
          add([copy]);
          select(copy.id);
        },
        (err: unknown) => {
          replay.disabled = false;
          toast(`Failed: ${err instanceof Error ? err.message : String(err)}`);
        },
      );
    });
    detail.replaceChildren();
    append(detail, [
      h(
        'h2',
        null,
        d.event,
        ' → ',
        d.target,
        ' ',
        h(
          'span',
          { class: `status ${d.status === 'delivered' ? 's2' : d.status === 'failed' ? 's5' : 's3'}`, id: 'wh-status' },
          d.status,
        ),
      ),
      h(
        'div',
        { class: 'meta' },
        h('span', null, d.id),
        h('span', null, `event id ${d.eventId}`),
        h('span', null, d.endpoint === null ? 'triggered or replayed' : `sent by ${d.endpoint}`),
      ),
      h('div', { class: 'row' }, replay),
      h('h3', null, 'Delivery'),
      table([
        ['url', d.url],
        ['next attempt', d.nextAttempt === null ? '— none' : new Date(d.nextAttempt).toLocaleString()],
        ['error', d.error ?? '— none'],
        ['chaos', d.chaos.join(', ') || '— none'],
      ]),
      h('h3', null, `Attempts (${d.attempts.length})`),
      d.attempts.length === 0
        ? h('p', { class: 'muted', id: 'wh-attempts' }, 'none yet')
        : h(
            'table',
            { class: 'answers', id: 'wh-attempts' },
            h(
              'thead',
              null,
              h('tr', null, ...['time', 'status', 'ms', 'error'].map((name) => h('th', { scope: 'col' }, name))),
            ),
            h(
              'tbody',
              null,
              ...d.attempts.map((a) =>
                h(
                  'tr',
                  null,
                  h('td', null, new Date(a.time).toLocaleTimeString()),
                  h('td', null, a.status ?? '—'),
                  h('td', { class: 'num' }, a.ms),
                  h('td', null, a.error ?? ''),
                ),
              ),
            ),
          ),
      h('h3', null, 'Headers of the latest attempt'),
      h('div', { id: 'wh-headers' }, table(Object.entries(d.headers))),
      h('h3', null, 'Body'),
      h('pre', { class: 'block', id: 'wh-body' }, pretty(d.body)),
    ]);
  }

  function select(id: string): void {
    const d = deliveries.get(id);
    if (d === undefined) return;
    if (selected !== undefined) rows.get(selected)?.setAttribute('aria-selected', 'false');
    selected = id;
    rows.get(id)?.setAttribute('aria-selected', 'true');
    rows.get(id)?.scrollIntoView({ block: 'nearest' });
    render(d);
  }

  /** Adds deliveries or their changes (from the log or the event stream). */
  function add(batch: Delivery[]): void {
    for (const d of batch) {
      const known = deliveries.get(d.id);
      if (known !== undefined && progress(known) > progress(d)) continue;
      deliveries.set(d.id, d);
      const row = rowOf(d);
      const old = rows.get(d.id);
      if (old !== undefined) old.replaceWith(row);
      else {
        // Newest first: below the nearest newer row, else at the top.
        let above: string | undefined;
        for (const other of rows.keys())
          if (num(other) > num(d.id) && (above === undefined || num(other) < num(above))) above = other;
        if (above === undefined) list.prepend(row);
        else rows.get(above)?.after(row);
      }
      rows.set(d.id, row);
      if (d.id === selected) {
        const focused = document.activeElement?.id;
        render(d);
        if (focused === 'wh-replay') byId('wh-replay').focus();
      }
    }
    while (deliveries.size > KEEP) {
      const oldest = deliveries.keys().next().value as string;
      deliveries.delete(oldest);
      rows.get(oldest)?.remove();
      rows.delete(oldest);
      if (oldest === selected) detail.replaceChildren(...hint);
    }
    const badge = byId('badge-webhooks');
    badge.textContent = String(deliveries.size);
    badge.hidden = deliveries.size === 0;
    byId('wh-empty').hidden = deliveries.size !== 0;
    if (!byId('view-webhooks').hidden) void refreshTargets();
  }

  function showTargets(all: WebhookTarget[]): void {
    byId('wh-targets').replaceChildren(
      ...all.map((t) =>
        h(
          'li',
          { 'data-target': t.name },
          h('strong', null, t.name),
          ` → ${t.url} · ${t.scheme}${t.secret === '' ? '' : ` · secret ${t.secret}`}${t.disabled ? ' · disabled' : ''} · ${t.pending} pending, ${t.delivered} delivered, ${t.failed} failed`,
        ),
      ),
    );
  }

  /**
   * One fetch of the targets at a time (deliveries change in bursts). A change while a fetch is in
   * flight may not be in its answer, so it asks for one more fetch when that one ends.
   */
  function refreshTargets(): Promise<void> {
    if (targets !== null) {
      targetsStale = true;
      return targets;
    }
    targetsStale = false;
    targets = api
      .webhookTargets()
      .then(showTargets, () => undefined)
      .finally(() => {
        targets = null;
        if (targetsStale) void refreshTargets();
      });
    return targets;
  }

  list.addEventListener('click', (ev) => {
    const row = (ev.target as Element).closest<HTMLElement>('li[data-id]');
    if (row?.dataset.id !== undefined) select(row.dataset.id);
  });
  list.addEventListener('keydown', (ev) => {
    if (ev.key !== 'ArrowDown' && ev.key !== 'ArrowUp' && ev.key !== 'Enter') return;
    ev.preventDefault();
    const ids = [...list.children].map((el) => (el as HTMLElement).dataset.id as string);
    const at = selected === undefined ? -1 : ids.indexOf(selected);
    const next =
      ids[
        ev.key === 'ArrowUp'
          ? Math.max(0, at - 1)
          : Math.min(ids.length - 1, at + (ev.key === 'Enter' && at !== -1 ? 0 : 1))
      ];
    if (next !== undefined) select(next);
  });

  return {
    add,
    select,
    /** Reads the delivery log (at start and after a reconnect) and the targets. */
    async refresh(): Promise<void> {
      add(await api.deliveries(KEEP));
      await refreshTargets();
    },
  };
}
