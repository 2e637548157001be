// The inspector page. Everything comes from the admin API of the server that served the
// page: the journal and its `request` events, usage, endpoints, scenarios, the project.
import {
  adminUrl,
  api,
  SESSION,
  type Delivery,
  type EndpointInfo,
  type Entry,
  type Project,
  type Usage,
} from './api.js';
import { byId, toast } from './dom.js';
import { renderGauges } from './gauges.js';
import { renderEndpoints, renderProject } from './project.js';
import { createRequestList } from './requests.js';
import { createStubsCard } from './stubs.js';
import { createWebhooksView } from './webhooks.js';
import { createResourcesView } from './resources.js';

let usage: Usage | undefined;
let project: Project | undefined;
let endpoints: EndpointInfo[] = [];

const stubs = createStubsCard();
const webhooks = createWebhooksView();
const resources = createResourcesView({
  openRequest: (id) => {
    openTab('requests', false);
    list.select(id);
  },
});
const TABS = ['requests', 'endpoints', 'project', 'webhooks', 'resources'];
const list = createRequestList({
  usage: () => usage,
  example: () => ({
    endpoint: endpoints[0],
    maskedKey: project?.maskedKey,
    basePath: project?.basePath,
    credential: project?.credential,
    accept: project?.accept,
  }),
  openDelivery: (id) => {
    openTab('webhooks', false);
    webhooks.select(id);
  },
});

function showUsage(next: Usage): void {
  usage = next;
  renderGauges(next);
}

async function refreshUsage(): Promise<void> {
  showUsage(await api.usage());
}

/** Endpoints, project and scenarios: what a reload, a rotation or a reset can change. */
async function refreshConfig(): Promise<void> {
  const [eps, proj, scenarios] = await Promise.all([
    api.endpoints(),
    api.project(false),
    api.scenarios().catch(() => ({})),
  ]);
  endpoints = eps;
  project = proj;
  // A named session is said beside the project: what the page shows is that session's alone.
  const where = SESSION === null ? proj.project : `${proj.project} · session ${SESSION}`;
  byId('project').textContent = where;
  document.title = `${where} · mockapi inspector`;
  renderEndpoints(eps, proj.basePath);
  renderProject(proj, scenarios, {
    refresh: () => Promise.all([refreshConfig(), refreshUsage()]).then(() => undefined),
  });
  list.setEndpoints(eps.map((e) => `${e.method} ${e.path}`));
}

/** Fetches what the journal holds past the newest entry shown (at start, and after a reconnect). */
async function catchUp(): Promise<void> {
  list.add(await api.requests(list.lastId(), 1000));
}

function connect(): void {
  const live = byId('live');
  const events = new EventSource(adminUrl('/events'));
  events.addEventListener('open', () => {
    live.textContent = 'live';
    live.classList.add('on');
    // Anything journaled while the stream was down (or before it opened) comes from a query.
    void catchUp().catch(() => undefined);
    void webhooks.refresh().catch(() => undefined);
  });
  events.addEventListener('error', () => {
    live.textContent = 'reconnecting…';
    live.classList.remove('on');
  });
  events.addEventListener('request', (ev) => {
    list.add([JSON.parse((ev as MessageEvent<string>).data) as Entry], true);
    // A request may use up a stub (`times`) or add to its hits: re-read them while they are shown.
    if (!byId('view-endpoints').hidden) void stubs.refresh();
    if (!byId('view-resources').hidden) resources.changed();
  });
  events.addEventListener('usage', (ev) => {
    showUsage(JSON.parse((ev as MessageEvent<string>).data) as Usage);
    list.refreshDetail();
  });
  events.addEventListener('webhook', (ev) => webhooks.add([JSON.parse((ev as MessageEvent<string>).data) as Delivery]));
  events.addEventListener('reload', () => {
    void refreshConfig().catch(() => undefined);
    void stubs.refresh();
  });
}

function openTab(name: string, focus: boolean): void {
  for (const t of TABS) {
    const tab = byId(`tab-${t}`);
    tab.setAttribute('aria-selected', String(t === name));
    tab.tabIndex = t === name ? 0 : -1;
    byId(`view-${t}`).hidden = t !== name;
  }
  if (focus) byId(`tab-${name}`).focus();
  // The counts move with every request: fetch them when the view opens.
  if (name === 'endpoints') {
    void api.endpoints().then(
      (eps) => renderEndpoints(eps, project?.basePath),
      () => undefined,
    );
    void stubs.refresh(); // stubs come and go over the admin API, which sends no event
  }
  if (name === 'webhooks') void webhooks.refresh().catch(() => undefined);
  if (name === 'resources') resources.changed();
}

function setupTabs(): void {
  const tabs = TABS;
  const open = openTab;
  tabs.forEach((t, i) => {
    const tab = byId(`tab-${t}`);
    tab.addEventListener('click', () => open(t, false));
    tab.addEventListener('keydown', (ev) => {
      const step = ev.key === 'ArrowRight' ? 1 : ev.key === 'ArrowLeft' ? -1 : 0;
      if (step !== 0) open(tabs[(i + step + tabs.length) % tabs.length] as string, true);
    });
  });
  document.addEventListener('keydown', (ev) => {
    const target = ev.target as HTMLElement;
    if (ev.altKey || ev.ctrlKey || ev.metaKey || target.closest('input, select, textarea') !== null) return;
    const index = ['1', '2', '3', '4', '5'].indexOf(ev.key);
    if (index !== -1) return open(tabs[index] as string, true);
    if (ev.key === '/') {
      ev.preventDefault();
      open('requests', false);
      byId('f-text').focus();
    } else if (ev.key === 'c' && !byId('view-requests').hidden) list.copySelected();
  });
}

async function start(): Promise<void> {
  setupTabs();
  byId('clear-requests').addEventListener('click', () => {
    api.clearRequests().then(list.clear, (err: unknown) => toast(`Failed: ${String(err)}`));
  });
  list.updateCount();
  connect();
  await Promise.all([refreshConfig(), refreshUsage(), catchUp(), stubs.refresh()]).catch((err: unknown) =>
    toast(`Could not load: ${err instanceof Error ? err.message : String(err)}`),
  );
  // The time to the next slot counts down on the server: ask it again every second while visible.
  window.setInterval(() => {
    if (document.visibilityState === 'visible') void refreshUsage().catch(() => undefined);
  }, 1000);
}

void start();
