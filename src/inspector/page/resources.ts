import { api, type CollectionContents, type HistoryEntry } from './api.js';
import { pretty } from './detail.js';
import { append, byId, h, toast } from './dom.js';

/**
 * The Resources view: each collection of `resources:` (a select), its objects newest first, and
 * the selected object with its history — created, updated, actions and lifecycle moves, each at
 * its time on the server clock and with the request that made it (a link to that request).
 * Re-read when the view opens and, while it is shown, after requests (at most every 300 ms).
 */
export function createResourcesView(ctx: { openRequest(id: number): void }) {
  const choose = byId<HTMLSelectElement>('res-collection');
  const list = byId<HTMLOListElement>('res-list');
  const detail = byId('res-detail');
  const hint = [...detail.childNodes];
  let contents: CollectionContents | undefined;
  let selected: string | undefined;
  let timer: number | undefined;
  let loading = false;

  const idOf = (object: Record<string, unknown>): string => String(object.id);

  function row(object: Record<string, unknown>): HTMLLIElement {
    const id = idOf(object);
    const status =
      typeof object.status === 'string' ? object.status : typeof object.state === 'string' ? object.state : '';
    const history = contents?.history?.[id] ?? [];
    return h(
      'li',
      { role: 'option', 'data-id': id, id: `res-${id}`, 'aria-selected': String(id === selected), title: id },
      h('span', { class: 'status s3' }, history.length),
      h('span', { class: 'method' }, status),
      h('span', { class: 'path mono' }, id),
      h('span', { class: 'ms' }, history.at(-1)?.kind ?? ''),
      h('span', { class: 'when' }, history.length === 0 ? '' : new Date(history.at(-1)!.at).toLocaleTimeString()),
    );
  }

  function historyRow(entry: HistoryEntry): HTMLTableRowElement {
    const by =
      entry.request === undefined
        ? h(
            'span',
            { class: 'muted' },
            entry.kind === 'lifecycle' ? 'the clock' : entry.kind === 'seeded' ? 'the seed' : 'the admin API',
          )
        : h('a', { href: `#req-${entry.request}`, 'data-request': entry.request }, `request #${entry.request}`);
    if (entry.request !== undefined) {
      by.addEventListener('click', (ev) => {
        ev.preventDefault();
        ctx.openRequest(entry.request as number);
      });
    }
    return h(
      'tr',
      null,
      h('td', null, new Date(entry.at).toLocaleString()),
      h('td', null, entry.kind),
      h('td', null, entry.detail ?? ''),
      h('td', null, by),
    );
  }

  function render(): void {
    const object = contents?.objects.find((o) => idOf(o) === selected);
    if (object === undefined || contents === undefined) {
      detail.replaceChildren(...hint);
      return;
    }
    const history = contents.history?.[idOf(object)] ?? [];
    detail.replaceChildren();
    append(detail, [
      h('h2', null, idOf(object)),
      h(
        'div',
        { class: 'meta' },
        h('span', null, `resources.${contents.name}`),
        h('span', null, `${contents.style} · ${contents.path}`),
      ),
      h('h3', null, 'Object'),
      h('pre', { class: 'block', id: 'res-object' }, pretty(JSON.stringify(object))),
      h('h3', null, `History (${history.length})`),
      h(
        'table',
        { class: 'answers', id: 'res-history' },
        h(
          'thead',
          null,
          h('tr', null, ...['time', 'what', 'detail', 'by'].map((name) => h('th', { scope: 'col' }, name))),
        ),
        h('tbody', null, ...history.map(historyRow)),
      ),
    ]);
  }

  function select(id: string | undefined): void {
    selected = id;
    for (const li of list.children) li.setAttribute('aria-selected', String((li as HTMLElement).dataset.id === id));
    if (id !== undefined) list.setAttribute('aria-activedescendant', `res-${id}`);
    render();
  }

  async function load(): Promise<void> {
    loading = true;
    try {
      const collections = await api.resources();
      byId('res-empty').hidden = collections.length > 0;
      const current = choose.value;
      choose.replaceChildren(
        ...collections.map((c) => h('option', { value: c.name }, `${c.name} (${c.count}) — ${c.style} ${c.path}`)),
      );
      choose.value = collections.some((c) => c.name === current) ? current : (collections[0]?.name ?? '');
      if (choose.value === '') {
        contents = undefined;
        list.replaceChildren();
        byId('res-count').textContent = '';
        return render();
      }
      contents = await api.collection(choose.value);
      byId('res-count').textContent = `${contents.objects.length} object${contents.objects.length === 1 ? '' : 's'}`;
      list.replaceChildren(...[...contents.objects].reverse().map(row));
      render();
    } finally {
      loading = false;
    }
  }

  list.addEventListener('click', (ev) => {
    const li = (ev.target as HTMLElement).closest('li');
    if (li !== null) select(li.dataset.id);
  });
  list.addEventListener('keydown', (ev) => {
    const ids = [...list.children].map((li) => (li as HTMLElement).dataset.id as string);
    const at = selected === undefined ? -1 : ids.indexOf(selected);
    const step = ev.key === 'ArrowDown' || ev.key === 'j' ? 1 : ev.key === 'ArrowUp' || ev.key === 'k' ? -1 : 0;
    if (step === 0 || ids.length === 0) return;
    ev.preventDefault();
    select(ids[Math.max(0, Math.min(ids.length - 1, at + step))]);
  });
  choose.addEventListener('change', () => {
    selected = undefined;
    void load().catch((err: unknown) => toast(`Could not load: ${String(err)}`));
  });
  byId('res-refresh').addEventListener(
    'click',
    () => void load().catch((err: unknown) => toast(`Could not load: ${String(err)}`)),
  );

  return {
    /** Something may have changed (the view opened, a request came): read again soon. */
    changed(): void {
      if (timer !== undefined || loading) return;
      timer = window.setTimeout(() => {
        timer = undefined;
        void load().catch(() => undefined);
      }, 300);
    },
  };
}
