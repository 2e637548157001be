// Meters' exactness at full load (bench/run.js --only meters, with redis-server): four mockapi serve
// processes on one Redis, every one loaded at once for 30 s (5 s with --quick) with requests that
// reserve 7 tokens and settle at 3, against a meter of 600 tokens a second. Every admission and
// settle is recorded by the script that made it (MOCKAPI_LIMIT_AUDIT, with Redis's own time); the
// replay counts the admissions that took some window of the meter over its limit: the figure must
// be 0. See BENCHMARKS.md.
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { API_KEY } from '../configs.js';
import { runLoad } from '../load.js';
import { CLI, opts, CLIENT_CORE, progress, AUTH, flags } from '../lib/options.js';
import { startServer } from '../lib/processes.js';
import { record, fmtRps } from '../lib/report.js';

const LIMIT = 600;
const WINDOW_MS = 1000;
const SCALE = 1_000_000;

function exactYaml(store) {
  return `project: bench-meters-exact
apiKey: ${API_KEY}
limits:
  store: ${store}
  meters:
    tokens: { limit: ${LIMIT}, window: ${WINDOW_MS}ms }
    spent: { limit: 9000000000, window: total }
endpoints:
  - method: POST
    path: /v1/work
    cost:
      tokens: { reserve: "\${body.reserve}", settle: "\${body.used}" }
      spent: "\${body.used}"
    response: { body: { ok: true } }
`;
}

/** The audit list of the project, parsed: admissions (`a`) and settles (`s`) of each meter. */
async function readAudit(store) {
  const { createClient } = await import('@redis/client');
  const url = store.startsWith('unix://') ? undefined : store;
  const client = createClient(url === undefined ? { socket: { path: store.slice('unix://'.length) } } : { url });
  await client.connect();
  const raw = await client.sendCommand(['LRANGE', '{mockapi:bench-meters-exact}:audit', '0', '-1']);
  await client.close();
  return raw.map((line) => {
    const [kind, meter, at, amount] = line.split('|');
    return { kind, meter, at: Number(at), amount: Number(amount) };
  });
}

/**
 * Replays the audit of `meter` in the order Redis ran the scripts: each admission, with what the
 * window `(at - WINDOW_MS, at]` held before it; settles correct the amount of their admission.
 */
export function overAdmissions(audit, meter) {
  const amounts = new Map();
  let over = 0;
  let admissions = 0;
  let fullest = 0;
  for (const entry of audit) {
    if (entry.kind === 'r' || entry.meter !== meter) continue;
    if (entry.kind === 's') {
      amounts.set(entry.at, (amounts.get(entry.at) ?? 0) + entry.amount);
      continue;
    }
    let held = 0;
    for (const [at, amount] of amounts) if (at > entry.at - WINDOW_MS && at <= entry.at) held += amount;
    if (held + entry.amount > LIMIT * SCALE) over++;
    fullest = Math.max(fullest, held + entry.amount);
    amounts.set(entry.at, (amounts.get(entry.at) ?? 0) + entry.amount);
    admissions++;
    // Amounts older than any later window can hold are dropped (the audit is in Redis-time order).
    if (admissions % 1000 === 0) for (const at of amounts.keys()) if (at <= entry.at - WINDOW_MS) amounts.delete(at);
  }
  return { over, admissions, fullest };
}

export async function metersExactScenario(dir, store) {
  const config = join(dir, 'meters-exact.yaml');
  await writeFile(config, exactYaml(store));
  const durationS = flags.quick ? 5 : 30;
  const servers = [];
  for (let i = 0; i < 4; i++) {
    servers.push(
      await startServer(
        `meters exact ${i + 1}`,
        [CLI, 'serve', '-c', config, '--port', '0', '--no-state', '--log', 'off', '--no-watch'],
        { env: { MOCKAPI_LIMIT_AUDIT: '5000000' } },
      ),
    );
  }
  progress(`meters exactness: 4 servers on one Redis, ${durationS} s of full load on each at once`);
  const body = JSON.stringify({ reserve: 7, used: 3 });
  const headers = { ...AUTH, 'content-type': 'application/json' };
  const connections = Math.max(4, Math.floor(opts.connections / 4));
  const loads = await Promise.all(
    servers.map((s) =>
      runLoad({
        tool: opts.tool,
        url: `${s.url}/mock/v1/work`,
        headers,
        durationS,
        connections,
        pinCore: CLIENT_CORE,
        method: 'POST',
        body,
      }),
    ),
  );
  // The settles are one more call after each answer: let the last ones land.
  await new Promise((resolve) => setTimeout(resolve, 1000));
  for (const s of servers) await s.stop();
  const audit = await readAudit(store);
  const { over, admissions, fullest } = overAdmissions(audit, 'tokens');
  const rps = loads.reduce((sum, r) => sum + r.rps, 0);
  const errors = loads.reduce((sum, r) => sum + r.errors, 0);
  const refused = loads.reduce((sum, r) => sum + r.non2xx, 0);
  const note = `${admissions} admitted and ${refused} refused (429) in ${durationS} s, ${fmtRps(rps)} over the 4 servers (${opts.tool}); fullest window ${fullest / SCALE} of ${LIMIT}${errors > 0 ? `, ${errors} socket errors` : ''}`;
  record(
    'meters: over-admissions, 4 servers on one Redis',
    String(over),
    { value: over, max: 0, invalid: admissions === 0 },
    note,
  );
}
