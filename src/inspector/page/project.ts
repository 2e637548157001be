import { api, type EndpointInfo, type Project } from './api.js';
import { byId, copyText, h, toast } from './dom.js';

/** The Endpoints view: each endpoint with its answers and how many requests each got. */
export function renderEndpoints(endpoints: EndpointInfo[]): void {
  const view = byId('view-endpoints');
  if (endpoints.length === 0) return void view.replaceChildren(h('div', { class: 'card' }, h('p', { class: 'muted' }, 'This config has no endpoints.')));
  view.replaceChildren(
    h(
      'div',
      { class: 'card', id: 'endpoints' },
      h('h2', null, `Endpoints (${endpoints.length})`, h('span', { class: 'muted' }, ' — served under /mock')),
      ...endpoints.map((e) =>
        h(
          'div',
          { class: 'ep' },
          h('div', { class: 'row' }, h('span', { class: 'method' }, e.method), h('code', null, e.path), e.requests === undefined ? null : h('span', { class: 'muted' }, `${e.requests} request${e.requests === 1 ? '' : 's'}`)),
          e.answers.length === 0 ? null : h('ul', null, ...e.answers.map((a) => h('li', null, h('code', null, a.name), a.requests === undefined ? '' : ` — ${a.requests}`))),
        ),
      ),
    ),
  );
}

/** What the Project view calls back into the page for. */
export interface ProjectContext {
  /** After a rotation or reset: fetch what changed. */
  refresh(): Promise<void>;
}

/**
 * The Project view: the key (masked; its full text only after "Show", and for "Copy" straight to the
 * clipboard), Rotate key, Reset usage and the scenario states.
 */
export function renderProject(project: Project, scenarios: Record<string, string>, ctx: ProjectContext): void {
  const view = byId('view-project');
  const keyText = h('code', { class: 'key mono', id: 'api-key' }, project.maskedKey);
  let shown = false;
  const show = h('button', { type: 'button', id: 'show-key', 'aria-pressed': 'false' }, 'Show');
  show.addEventListener('click', () =>
    act(async () => {
      if (shown) keyText.textContent = project.maskedKey;
      else keyText.textContent = (await api.project(true)).key ?? project.maskedKey;
      shown = !shown;
      show.textContent = shown ? 'Hide' : 'Show';
      show.setAttribute('aria-pressed', String(shown));
    }),
  );
  const copy = h('button', { type: 'button', id: 'copy-key' }, 'Copy');
  copy.addEventListener('click', () =>
    act(async () => {
      const { key } = await api.project(true);
      if (key !== undefined) await copyText(key);
      toast('Key copied');
    }),
  );
  const rotate = h('button', { type: 'button', id: 'rotate-key', class: 'danger' }, 'Rotate key');
  rotate.addEventListener('click', () => {
    if (!confirm('Rotate the API key? The config file gets a new key and the old one is refused at once.')) return;
    act(async () => {
      await api.rotateKey();
      toast('Key rotated: the old key now gets 401');
      await ctx.refresh();
    });
  });
  const reset = h('button', { type: 'button', id: 'reset-usage', class: 'danger' }, 'Reset usage');
  reset.addEventListener('click', () => {
    if (!confirm("Reset usage? This month's count and the rate window go back to 0.")) return;
    act(async () => {
      await api.resetUsage();
      toast('Usage reset');
      await ctx.refresh();
    });
  });

  const names = Object.keys(scenarios);
  view.replaceChildren(
    h(
      'div',
      { class: 'card' },
      h('h2', null, 'Project ', h('span', { class: 'muted', id: 'project-name' }, project.project)),
      h('div', { class: 'row' }, h('span', null, 'API key'), keyText, copy, show, rotate),
      h('p', { class: 'muted' }, 'Rotate key writes a new key into the config file (as mockapi rotate-key) and the server refuses the old one at once.'),
    ),
    h('div', { class: 'card' }, h('h2', null, 'Usage'), h('div', { class: 'row' }, reset, h('span', { class: 'muted' }, "zeroes this month's quota count and the rate window; the journal stays."))),
    h(
      'div',
      { class: 'card', id: 'scenarios' },
      h('h2', null, 'Scenarios'),
      names.length === 0 ? h('p', { class: 'muted' }, 'This config declares no scenarios.') : null,
      ...names.map((name) => scenarioRow(name, scenarios[name] ?? '')),
    ),
  );
}

function scenarioRow(name: string, state: string): HTMLElement {
  const input = h('input', { type: 'text', value: state, 'aria-label': `State of ${name}`, 'data-scenario': name });
  const form = h('form', { class: 'row' }, h('code', null, name), input, h('button', { type: 'submit' }, 'Set'));
  form.addEventListener('submit', (ev) => {
    ev.preventDefault();
    act(async () => {
      const states = await api.setScenario(name, input.value);
      input.value = states[name] ?? input.value;
      toast(`${name} is now ${input.value}`);
    });
  });
  return form;
}

/** Runs a user action; a failure is shown, not thrown into the console only. */
function act(action: () => Promise<void>): void {
  action().catch((err: unknown) => toast(`Failed: ${err instanceof Error ? err.message : String(err)}`));
}
