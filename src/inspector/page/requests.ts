// The live request list of the inspector, with its filters and keyboard and mouse selection, and
// the detail of the selected request. Rows and filter matching are in request-row.ts.
import type { Entry, Usage } from './api.js';
import { curlOf, exampleCurl } from './curl.js';
import { copyCurl, renderDetail } from './detail.js';
import { byId, h } from './dom.js';
import { STEP_LABELS, type KeyPlace } from './trace.js';
import { matchesFilters, requestRow, type Filters } from './request-row.js';

/** The page keeps at most this many requests (the journal's default size). */
const KEEP = 1000;

/** What the list needs from the rest of the page. */
export interface ListContext {
  usage(): Usage | undefined;
  /** The first endpoint and the masked key, for the empty state's example. */
  example(): {
    endpoint: { method: string; path: string } | undefined;
    maskedKey: string | undefined;
    basePath?: string | undefined;
    credential?: { via: string; name?: string } | undefined;
    accept?: KeyPlace[] | undefined;
  };
  /** Shows a webhook delivery (a link in the detail of the request that caused it). */
  openDelivery?(id: string): void;
}

/** The live request list with its filters, and the detail of the selected request. */
export function createRequestList(ctx: ListContext) {
  const list = byId<HTMLOListElement>('list');
  const detail = byId('detail');
  const empty = byId('empty');
  const count = byId('count');
  const entries = new Map<number, Entry>();
  const rows = new Map<number, HTMLLIElement>();
  let selected: number | undefined;
  let filters: Filters = { text: '', status: '', step: '', endpoint: '' };
  /** What the detail pane shows while no request is selected (the page's own hint). */
  const hint = [...detail.childNodes];

  for (const [step, label] of Object.entries(STEP_LABELS))
    byId('f-step').appendChild(h('option', { value: step }, label));

  function updateCount(): void {
    const shown = list.childElementCount;
    const badge = byId('badge-requests');
    badge.textContent = String(entries.size);
    badge.hidden = false;
    badge.title = `${entries.size} request${entries.size === 1 ? '' : 's'} in the journal`;
    count.textContent =
      entries.size === 0
        ? ''
        : shown === entries.size
          ? `${shown} request${shown === 1 ? '' : 's'}`
          : `${shown} of ${entries.size} requests match`;
    empty.hidden = shown !== 0;
    if (shown !== 0) return;
    if (entries.size !== 0) return void empty.replaceChildren(h('p', null, 'No request matches these filters.'));
    showExample(empty, ctx.example());
  }

  /** Adds entries from the journal (SSE or a fetch); duplicates are ignored. */
  function add(batch: Entry[], live = false): void {
    for (const e of batch) {
      if (entries.has(e.id)) continue;
      entries.set(e.id, e);
      if (!matchesFilters(e, filters)) continue;
      const row = requestRow(e);
      // Newest first: below the nearest newer row shown, else at the top (the usual case).
      let above: number | undefined;
      for (const id of rows.keys()) if (id > e.id && (above === undefined || id < above)) above = id;
      rows.set(e.id, row);
      if (above === undefined) list.prepend(row);
      else rows.get(above)?.after(row);
      if (live) row.classList.add('fresh');
    }
    while (entries.size > KEEP) {
      const oldest = entries.keys().next().value as number;
      entries.delete(oldest);
      rows.get(oldest)?.remove();
      rows.delete(oldest);
      if (oldest === selected) unselect();
    }
    updateCount();
  }

  function rebuild(): void {
    rows.clear();
    const shown = [...entries.values()].filter((e) => matchesFilters(e, filters)).sort((a, b) => b.id - a.id);
    list.replaceChildren(
      ...shown.map((e) => {
        const row = requestRow(e);
        rows.set(e.id, row);
        return row;
      }),
    );
    // A request the filters hide leaves the detail too: the pane never shows what the list does not.
    if (selected !== undefined && !rows.has(selected)) unselect();
    if (selected !== undefined) rows.get(selected)?.setAttribute('aria-selected', 'true');
    updateCount();
  }

  function unselect(): void {
    if (selected !== undefined) rows.get(selected)?.setAttribute('aria-selected', 'false');
    selected = undefined;
    list.removeAttribute('aria-activedescendant');
    if (detail.contains(document.activeElement)) list.focus();
    detail.replaceChildren(...hint);
  }

  function select(id: number, openDetail: boolean): void {
    const entry = entries.get(id);
    if (entry === undefined) return;
    if (selected !== undefined) rows.get(selected)?.setAttribute('aria-selected', 'false');
    selected = id;
    const row = rows.get(id);
    row?.setAttribute('aria-selected', 'true');
    row?.scrollIntoView({ block: 'nearest' });
    list.setAttribute('aria-activedescendant', `req-${id}`);
    renderDetail(detail, entry, ctx.usage(), ctx.example().accept, ctx.openDelivery);
    if (openDetail) detail.focus();
  }

  function move(delta: number | 'first' | 'last'): void {
    const ids = [...list.children].map((el) => Number((el as HTMLElement).dataset.id));
    if (ids.length === 0) return;
    const at = selected === undefined ? -1 : ids.indexOf(selected);
    const next =
      delta === 'first'
        ? 0
        : delta === 'last'
          ? ids.length - 1
          : at === -1
            ? 0
            : Math.max(0, Math.min(ids.length - 1, at + delta));
    select(ids[next] as number, false);
  }

  listenForSelection(list, detail, { move, select, selected: () => selected });

  const form = byId<HTMLFormElement>('filters');
  const readFilters = (): void => {
    const next: Filters = {
      text: (byId<HTMLInputElement>('f-text').value ?? '').trim().toLowerCase(),
      status: byId<HTMLSelectElement>('f-status').value,
      step: byId<HTMLSelectElement>('f-step').value,
      endpoint: byId<HTMLSelectElement>('f-endpoint').value,
    };
    // The text box fires `change` again when it loses focus (after its `input` events): same
    // filters, no redraw — redrawing then replaced the row being clicked.
    if (Object.keys(next).every((k) => next[k as keyof Filters] === filters[k as keyof Filters])) return;
    filters = next;
    rebuild();
  };
  form.addEventListener('input', readFilters);
  form.addEventListener('change', readFilters);
  form.addEventListener('submit', (ev) => ev.preventDefault());

  return {
    add,
    /** The journal was cleared (here or elsewhere). */
    clear(): void {
      entries.clear();
      unselect();
      rebuild();
    },
    /** The endpoint filter's choices, after a (re)load. */
    setEndpoints(keys: string[]): void {
      const select = byId<HTMLSelectElement>('f-endpoint');
      const current = select.value;
      select.replaceChildren(
        h('option', { value: '' }, 'any endpoint'),
        ...keys.map((k) => h('option', { value: k }, k)),
      );
      select.value = keys.includes(current) ? current : '';
      updateCount();
    },
    /** `c`: copy the selected request as cURL. */
    copySelected(): void {
      const entry = selected === undefined ? undefined : entries.get(selected);
      if (entry !== undefined) void copyCurl(curlOf(entry, location.origin));
    },
    /** Re-renders the open detail (a usage change can add numbers to its trace). */
    refreshDetail(): void {
      const entry = selected === undefined ? undefined : entries.get(selected);
      if (entry !== undefined && !detail.contains(document.activeElement))
        renderDetail(detail, entry, ctx.usage(), ctx.example().accept, ctx.openDelivery);
    },
    lastId: (): number => Math.max(0, ...entries.keys()),
    /** Shows one request (a resource's history names the request that changed an object). */
    select: (id: number): void => select(id, true),
    updateCount,
  };
}

/** What selecting in the list needs: moving the selection, selecting a request, the one selected. */
interface Navigation {
  move(delta: number | 'first' | 'last'): void;
  select(id: number, openDetail: boolean): void;
  selected(): number | undefined;
}

/** The list's keys (arrows, j/k, Home/End, Enter) and mouse selection, and the detail's way back to the list. */
function listenForSelection(list: HTMLOListElement, detail: HTMLElement, nav: Navigation): void {
  const { move, select } = nav;
  list.addEventListener('keydown', (ev) => {
    const keys: Record<string, () => void> = {
      ArrowDown: () => move(1),
      j: () => move(1),
      ArrowUp: () => move(-1),
      k: () => move(-1),
      Home: () => move('first'),
      End: () => move('last'),
      Enter: () => (nav.selected() === undefined ? move('first') : select(nav.selected() as number, true)),
      ArrowRight: () => nav.selected() !== undefined && select(nav.selected() as number, true),
    };
    const action = keys[ev.key];
    if (action === undefined || ev.altKey || ev.ctrlKey || ev.metaKey) return;
    ev.preventDefault();
    action();
  });
  // A row is chosen when the button goes down, by the id it carries. Not on `click`: a click only
  // counts when the button comes up over the same row, and rows can move in between — a live request
  // prepends a row, a filter's `change` on blur redraws the list — which lost the click. Nor on the
  // list's focus: focusing it by mouse used to select (and scroll to) the newest row first.
  const rowAt = (target: EventTarget | null): number | undefined => {
    const row = (target as Element | null)?.closest<HTMLElement>('li[data-id]');
    return row === null || row === undefined || !list.contains(row) ? undefined : Number(row.dataset.id);
  };
  list.addEventListener('mousedown', (ev) => {
    if (ev.button !== 0 || ev.altKey || ev.ctrlKey || ev.metaKey || ev.shiftKey) return;
    const id = rowAt(ev.target);
    if (id !== undefined) select(id, false);
  });
  // A click with no press before it (a screen reader's activation, `element.click()`) still selects.
  list.addEventListener('click', (ev) => {
    const id = rowAt(ev.target);
    if (id !== undefined && id !== nav.selected()) select(id, false);
  });
  detail.addEventListener('keydown', (ev) => {
    if (ev.key !== 'Escape' && ev.key !== 'ArrowLeft') return;
    ev.preventDefault();
    list.focus();
  });
}

/** The empty list's example: a cURL call of the first endpoint with the masked key. */
function showExample(empty: HTMLElement, example: ReturnType<ListContext['example']>): void {
  const { endpoint, maskedKey, basePath, credential } = example;
  empty.replaceChildren(
    h('p', null, h('strong', null, 'No requests yet'), ' — try:'),
    h('pre', { class: 'block', id: 'example' }, exampleCurl(location.origin, endpoint, basePath, credential)),
    h(
      'p',
      { class: 'muted' },
      'MOCKAPI_KEY is the apiKey of the config',
      maskedKey === undefined ? '' : ` (${maskedKey})`,
      ' — copy it under Project. Requests appear here as they arrive.',
    ),
  );
}
