// Meters (issue 41): an endpoint with two meters (a tokens window and a monthly spend) and a settle
// after each answer, against the same endpoint without meters, in one process and through Redis,
// in the same interleaved rounds. See BENCHMARKS.md.
//
// Beside them, a reference without a target: the same endpoint without meters whose answers carry
// the metered answer's two extra headers (`RateLimit-Policy`, `RateLimit`, byte for byte as the
// metered server sent them) as static response headers — what those bytes cost with no meter
// counted, the part of the metered figure no meter code can remove.
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { METERS_BODY_TEXT as BODY_TEXT, meterHeadersYaml, metersYaml } from '../configs.js';
import { runLoad } from '../load.js';
import { CLI, opts, CLIENT_CORE, AUTH } from '../lib/options.js';
import { startServer, fetchText, median } from '../lib/processes.js';
import { record, fmtRps } from '../lib/report.js';
import { interleavedRounds } from '../lib/rounds.js';

export async function metersScenario(dir, store) {
  const plain = join(dir, 'meters-off.yaml');
  const metered = join(dir, 'meters-on.yaml');
  await writeFile(plain, metersYaml(false));
  await writeFile(metered, metersYaml(true));
  const serve = (file, extra = []) => [CLI, 'serve', '-c', file, '--port', '0', '--no-state', '--log', 'off', ...extra];
  const servers = [
    { key: 'plain', label: 'one endpoint, no meters', args: serve(plain) },
    { key: 'metered', label: 'one endpoint, two meters and a settle', args: serve(metered) },
  ];
  if (store !== undefined) {
    servers.push({ key: 'plainStore', label: 'no meters, --store (Redis)', args: serve(plain, ['--store', store]) });
    servers.push({
      key: 'meteredStore',
      label: 'two meters and a settle, --store (Redis)',
      args: serve(metered, ['--store', store]),
    });
  }
  const path = '/mock/users/42';
  const headersOnly = join(dir, 'meters-headers.yaml');
  servers.splice(2, 0, {
    key: 'headers',
    label: "no meters, the metered answer's two extra headers sent static",
    args: serve(headersOnly),
    // Written once the metered server answered: its headers, byte for byte.
    async before(metered) {
      const answer = await fetchText(`${metered.handle.url}${path}`, AUTH);
      const policy = answer.headers['ratelimit-policy'];
      const current = answer.headers['ratelimit'];
      if (typeof policy !== 'string' || typeof current !== 'string')
        throw new Error(
          `the metered answer has no RateLimit-Policy and RateLimit headers: ${JSON.stringify(answer.headers)}`,
        );
      await writeFile(headersOnly, meterHeadersYaml({ 'RateLimit-Policy': policy, RateLimit: current }));
    },
  });
  for (const server of servers) {
    await server.before?.(servers.find((s) => s.key === 'metered'));
    server.handle = await startServer(server.label, server.args);
    const check = await fetchText(`${server.handle.url}${path}`, AUTH);
    if (check.status !== 200 || check.body !== BODY_TEXT)
      throw new Error(`${server.label}: unexpected answer ${check.status} ${check.body}`);
  }
  const load = (server, durationS) =>
    runLoad({
      tool: opts.tool,
      url: `${server.handle.url}${path}`,
      headers: AUTH,
      durationS,
      connections: opts.connections,
      pinCore: CLIENT_CORE,
    });
  const runs = await interleavedRounds('meters', servers, load, (result) =>
    result.non2xx + result.errors > 0 ? `, ${result.non2xx} non-2xx, ${result.errors} errors` : '',
  );
  for (const server of servers) await server.handle.stop();
  const bad = (key) => runs[key].reduce((sum, r) => sum + r.non2xx + r.errors, 0);
  const figure = (key, base, name) => {
    const ratios = runs[key].map((r, i) => r.rps / runs[base][i].rps);
    const note =
      bad(key) > 0
        ? `${bad(key)} non-2xx answers or socket errors: figure not valid`
        : `vs ${servers.find((s) => s.key === base).label}: ${fmtRps(median(runs[base].map((r) => r.rps)))}; ratio per round: ${ratios.map((x) => x.toFixed(2)).join(' / ')}`;
    record(
      name,
      fmtRps(median(runs[key].map((r) => r.rps))),
      { ratio: median(ratios), min: 0.95, invalid: bad(key) > 0 },
      note,
    );
  };
  figure('metered', 'plain', 'two meters and a settle, one process');
  const headerRatios = runs.headers.map((r, i) => r.rps / runs.plain[i].rps);
  record(
    "reference: the metered answer's two extra headers alone, static, one process",
    fmtRps(median(runs.headers.map((r) => r.rps))),
    { ratio: median(headerRatios) },
    bad('headers') > 0
      ? `${bad('headers')} non-2xx answers or socket errors: figure not valid`
      : `no target: what the bytes cost with no meter counted; ratio per round: ${headerRatios.map((x) => x.toFixed(2)).join(' / ')}`,
  );
  if (store !== undefined) figure('meteredStore', 'plainStore', 'two meters and a settle, through Redis');
  else record('two meters and a settle, through Redis', 'skipped', undefined, 'redis-server is not installed');
}
