// Dynamic answers against bare node:http and a static endpoint (bench/run.js --only dynamic).
import { DYNAMIC_LOADS } from '../configs.js';
import { runLoad } from '../load.js';
import { CLI, BARE, opts, BARE_ENV, BARE_LABEL, CLIENT_CORE, progress, AUTH } from '../lib/options.js';
import { startServer, fetchText, median } from '../lib/processes.js';
import { record, fmtRps } from '../lib/report.js';

/**
 * Dynamic answers (issue 14): a static endpoint, `when` on params and query, five request-derived
 * fields and ten seeded `fake.*` fields, each against bare node:http in the same interleaved rounds.
 */
export async function dynamicScenarios(dir, files) {
  const serveArgs = (file) => [CLI, 'serve', '-c', file, '--port', '0', '--no-state', '--log', 'off', '--no-watch'];
  const loads = [
    { key: 'bare', label: BARE_LABEL, args: [BARE], env: BARE_ENV, path: '/mock/users/42', headers: {} },
    {
      key: 'static',
      label: 'static endpoint',
      args: serveArgs(files.one),
      path: '/mock/users/42',
      headers: AUTH,
      min: 0.9,
    },
    { key: 'when', label: 'when on params + query', shared: true, ...DYNAMIC_LOADS.when, min: 0.85 },
    { key: 'fields', label: 'five request-derived fields', shared: true, ...DYNAMIC_LOADS.fields, min: 0.75 },
    { key: 'fake', label: 'ten fake.* fields, seeded', shared: true, ...DYNAMIC_LOADS.fake, min: 0.35 },
    // A look-alike served at the root (`server.basePath: /`): the same static answer, another prefix.
    {
      key: 'root',
      label: 'static endpoint, basePath: /',
      figure: 'basePath: / (static endpoint at the root)',
      args: serveArgs(files.root),
      path: '/users/42',
      headers: AUTH,
      min: 0.9,
    },
  ];
  const bare = await startServer('bare node:http', loads[0].args, { env: loads[0].env });
  const single = await startServer('mockapi static', loads[1].args);
  const dynamic = await startServer('mockapi dynamic', serveArgs(files.dynamic));
  const root = await startServer('mockapi basePath: /', serveArgs(files.root));
  for (const l of loads) {
    l.handle = l.key === 'bare' ? bare : l.key === 'static' ? single : l.key === 'root' ? root : dynamic;
    l.headers = l.key === 'bare' ? {} : { ...AUTH, ...l.headers };
    const check = await fetchText(`${l.handle.url}${l.path}`, l.headers);
    if (check.status !== 200) throw new Error(`${l.label}: unexpected answer ${check.status} ${check.body}`);
    // An expression that fails gives null (SPEC §7), and a failing one is slow (faker throws):
    // a figure measured on such answers would say nothing about the answers the config asks for.
    const empty = l.shared ? nullFields(JSON.parse(check.body)) : [];
    if (empty.length > 0) throw new Error(`${l.label}: the answer has null in ${empty.join(', ')}: ${check.body}`);
  }
  const load = (l, durationS) =>
    runLoad({
      tool: opts.tool,
      url: `${l.handle.url}${l.path}`,
      headers: l.headers,
      durationS,
      connections: opts.connections,
      pinCore: CLIENT_CORE,
    });
  progress(`dynamic warm-up: ${opts.warmupS} s each`);
  for (const l of loads) await load(l, opts.warmupS);
  const runs = Object.fromEntries(loads.map((l) => [l.key, []]));
  for (let round = 1; round <= opts.rounds; round++) {
    const order = round % 2 === 1 ? loads : [...loads].reverse();
    for (const l of order) {
      await load(l, opts.settleS);
      const result = await load(l, opts.durationS);
      runs[l.key].push(result);
      progress(`round ${round}/${opts.rounds} ${l.label}: ${fmtRps(result.rps)}`);
    }
  }
  for (const handle of [bare, single, dynamic, root]) await handle.stop();
  for (const l of loads.slice(1)) {
    const ratios = runs[l.key].map((r, i) => r.rps / runs.bare[i].rps);
    const bad = runs[l.key].reduce((sum, r) => sum + r.non2xx + r.errors, 0);
    const rps = median(runs[l.key].map((r) => r.rps));
    record(
      l.figure ?? `dynamic: ${l.label}`,
      fmtRps(rps),
      { ratio: median(ratios), min: l.min, invalid: bad > 0 },
      bad > 0 ? `${bad} non-2xx or errors` : `ratio per round: ${ratios.map((x) => x.toFixed(2)).join(' / ')}`,
    );
  }
}

/** The fields of a JSON answer whose value is null. */
function nullFields(value) {
  if (value === null || typeof value !== 'object') return [];
  return Object.entries(value).flatMap(([key, v]) =>
    v === null ? [key] : nullFields(v).map((inner) => `${key}.${inner}`),
  );
}
