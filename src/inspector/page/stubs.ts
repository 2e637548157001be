import { api, type StubView } from './api.js';
import { byId, h, toast } from './dom.js';

/**
 * The run-time stubs card of the Endpoints view: each stub added over `POST /__mockapi/stubs` (by a
 * test helper or by hand) with its method and path, answers left of `times`, hits, and a Remove
 * button. Hidden while there are none. Text only: names and paths come from whoever added them.
 */
export function createStubsCard(): { refresh(): Promise<void> } {
  let pending: Promise<void> | null = null;
  let again = false;

  // One fetch at a time; a refresh asked for meanwhile runs once after it (requests come in bursts).
  function refresh(): Promise<void> {
    if (pending !== null) {
      again = true;
      return pending;
    }
    pending = api
      .stubs()
      .then(render, () => undefined)
      .finally(() => {
        pending = null;
        if (again) {
          again = false;
          void refresh();
        }
      });
    return pending;
  }

  function remove(stub: StubView, button: HTMLButtonElement): void {
    button.disabled = true;
    api.removeStub(stub.id).then(
      () => {
        toast(`Removed stub ${stub.name ?? stub.id}`);
        void refresh();
      },
      (err: unknown) => {
        button.disabled = false;
        toast(`Failed: ${err instanceof Error ? err.message : String(err)}`);
        void refresh();
      },
    );
  }

  function render(stubs: StubView[]): void {
    const card = byId('stubs');
    card.hidden = stubs.length === 0;
    card.replaceChildren(
      h(
        'h2',
        null,
        `Run-time stubs (${stubs.length})`,
        h('span', { class: 'muted' }, ' — answer before the config, newest first'),
      ),
      h(
        'table',
        { class: 'answers' },
        h(
          'thead',
          null,
          h(
            'tr',
            null,
            ...['stub', 'method', 'path', 'left', 'hits', ''].map((name) =>
              h('th', { scope: 'col', class: name === 'left' || name === 'hits' ? 'num' : undefined }, name),
            ),
          ),
        ),
        h(
          'tbody',
          null,
          ...stubs.map((s) => {
            const button = h(
              'button',
              { type: 'button', class: 'quiet', title: `Remove this stub (DELETE /__mockapi/stubs/${s.id})` },
              'Remove',
            );
            button.addEventListener('click', () => remove(s, button));
            return h(
              'tr',
              { 'data-stub': s.id },
              h('td', null, h('code', null, s.name ?? s.id)),
              h('td', null, h('span', { class: 'method' }, s.method)),
              h('td', null, h('code', null, s.path)),
              h('td', { class: 'num' }, s.remaining === null ? '∞' : `${s.remaining}/${s.times ?? s.remaining}`),
              h('td', { class: 'num' }, String(s.hits)),
              h('td', null, button),
            );
          }),
        ),
      ),
    );
  }

  return { refresh };
}
