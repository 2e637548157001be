import { api, type AnswerInfo, type EndpointInfo, type Project } from './api.js';
import { byId, copyText, h, toast } from './dom.js';

/**
 * The Endpoints view: each endpoint with its fail rate and its answers — status, condition, weight
 * or steps, hits. `basePath` is the project's (`/mock` until the project has been read).
 */
export function renderEndpoints(endpoints: EndpointInfo[], basePath: string | undefined): void {
  const view = byId('endpoints-pane');
  const badge = byId('badge-endpoints');
  badge.textContent = String(endpoints.length);
  badge.title = `${endpoints.length} endpoint${endpoints.length === 1 ? '' : 's'} in the config`;
  badge.hidden = false;
  if (endpoints.length === 0)
    return void view.replaceChildren(
      h('div', { class: 'card' }, h('p', { class: 'muted' }, 'This config has no endpoints.')),
    );
  view.replaceChildren(
    h(
      'div',
      { class: 'card', id: 'endpoints' },
      h(
        'h2',
        null,
        `Endpoints (${endpoints.length})`,
        h('span', { class: 'muted', id: 'served-under' }, ` — served under ${basePath ?? '/mock'}`),
      ),
      ...endpoints.map((e) =>
        h(
          'div',
          { class: 'ep', 'data-endpoint': `${e.method} ${e.path}` },
          h(
            'div',
            { class: 'row' },
            h('span', { class: 'method' }, e.method),
            h('code', null, e.path),
            e.failRate === undefined
              ? null
              : h(
                  'span',
                  { class: 'fail-rate', title: 'failRate: this share of requests gets the simulated 500' },
                  `failRate ${percent(e.failRate)}`,
                ),
            e.requests === undefined
              ? null
              : h('span', { class: 'muted' }, `${e.requests} request${e.requests === 1 ? '' : 's'}`),
          ),
          e.answers.length === 0 ? null : answersTable(e.answers),
        ),
      ),
    ),
  );
}

/** `0.1` → `10%`, `0.025` → `2.5%`. */
function percent(rate: number): string {
  return `${Number((rate * 100).toFixed(2))}%`;
}

function answersTable(answers: AnswerInfo[]): HTMLElement {
  const chance = answers.some((a) => a.weight !== undefined);
  const steps = answers.some((a) => a.times !== undefined);
  const head = ['answer', 'status', 'when', ...(chance ? ['weight'] : []), ...(steps ? ['times'] : []), 'hits'];
  return h(
    'table',
    { class: 'answers' },
    h(
      'thead',
      null,
      h(
        'tr',
        null,
        ...head.map((name) =>
          h(
            'th',
            { scope: 'col', class: name === 'hits' || name === 'weight' || name === 'times' ? 'num' : undefined },
            name,
          ),
        ),
      ),
    ),
    h(
      'tbody',
      null,
      ...answers.map((a) =>
        h(
          'tr',
          { 'data-answer': a.name },
          h('td', null, h('code', null, a.name)),
          h(
            'td',
            { class: a.status === undefined ? 'muted' : `status s${String(a.status).charAt(0)}` },
            a.status === undefined ? '—' : String(a.status),
          ),
          h(
            'td',
            { class: 'when' },
            a.when === undefined || a.when.length === 0
              ? h('span', { class: 'muted' }, 'always')
              : a.when.join(' and '),
          ),
          chance ? h('td', { class: 'num' }, a.weight === undefined ? '' : String(a.weight)) : null,
          steps ? h('td', { class: 'num' }, a.times === undefined ? '' : `×${a.times}`) : null,
          h('td', { class: 'num' }, a.requests === undefined ? '—' : String(a.requests)),
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
      h(
        'p',
        { class: 'muted' },
        'Rotate key writes a new key into the config file (as mockapi rotate-key) and the server refuses the old one at once.',
      ),
    ),
    h(
      'div',
      { class: 'card' },
      h('h2', null, 'Usage'),
      h(
        'div',
        { class: 'row' },
        reset,
        h('span', { class: 'muted' }, "zeroes this month's quota count and the rate window; the journal stays."),
      ),
    ),
    h(
      'div',
      { class: 'card', id: 'scenarios' },
      h('h2', null, 'Scenarios'),
      names.length === 0 ? h('p', { class: 'muted' }, 'This config declares no scenarios.') : null,
      ...names.map((name) => scenarioRow(name, scenarios[name] ?? '', project.scenarioStates?.[name] ?? [])),
    ),
  );
}

/** A scenario's state: a choice among the states the config names (and the current one). */
function scenarioRow(name: string, state: string, known: string[]): HTMLElement {
  const states = known.includes(state) ? known : [...known, state];
  const select = h(
    'select',
    { 'aria-label': `State of ${name}`, 'data-scenario': name },
    ...states.map((s) => h('option', { value: s }, s)),
  );
  select.value = state;
  const form = h('form', { class: 'row' }, h('code', null, name), select, h('button', { type: 'submit' }, 'Set'));
  form.addEventListener('submit', (ev) => {
    ev.preventDefault();
    act(async () => {
      const now = await api.setScenario(name, select.value);
      toast(`${name} is now ${now[name] ?? select.value}`);
    });
  });
  return form;
}

/** Runs a user action; a failure is shown, not thrown into the console only. */
function act(action: () => Promise<void>): void {
  action().catch((err: unknown) => toast(`Failed: ${err instanceof Error ? err.message : String(err)}`));
}
