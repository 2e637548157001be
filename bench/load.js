// Load generators: wrk when it is on PATH (a separate C process, far lighter than any JS client),
// autocannon in-process otherwise. Both report requests/s, p50/p99 latency in ms and the
// number of answers that were not 2xx (a throughput figure with refusals in it is not valid).
import { spawn, spawnSync } from 'node:child_process';
import { rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/** 'wrk' when the wrk binary runs, else 'autocannon'. */
export function defaultTool() {
  const probe = spawnSync('wrk', ['--version'], { encoding: 'utf8' });
  return probe.error === undefined ? 'wrk' : 'autocannon';
}

/**
 * Runs one load of `durationS` seconds against `url` with `connections` keep-alive connections.
 * `pinCore`: the core (or cores, as taskset's list: `12-15`) wrk runs on (autocannon runs where
 * the driver runs); `threads`: wrk's threads (default 1: one per core it is given). `headerSets`: the
 * requests go round these headers, one set a request, over `headers` (ten keys, say); wrk then
 * runs a Lua script that returns requests formatted once, autocannon its `requests` list.
 * @returns {Promise<{rps: number, p50: number, p90: number, p99: number, non2xx: number, errors: number}>}
 */
export function runLoad({
  tool,
  url,
  headers = {},
  headerSets,
  durationS,
  connections,
  pinCore,
  threads = 1,
  method,
  body,
}) {
  return tool === 'wrk'
    ? runWrk({ url, headers, headerSets, durationS, connections, pinCore, threads, method, body })
    : runAutocannon({ url, headers, headerSets, durationS, connections, method, body });
}

/** A wrk script that sends every request with `method` and `body` (a POST load). */
function bodyScript(method, body) {
  const file = join(tmpdir(), `mockapi-bench-${process.pid}-${scripts++}.lua`);
  writeFileSync(file, `wrk.method = ${JSON.stringify(method)}\nwrk.body = ${JSON.stringify(body ?? '')}\n`);
  return file;
}

let scripts = 0;

/** A wrk script whose requests go round `headerSets` (each over wrk's own headers), formatted in init. */
function roundRobinScript(headerSets) {
  const file = join(tmpdir(), `mockapi-bench-${process.pid}-${scripts++}.lua`);
  const sets = headerSets.map(
    (set) =>
      `{ ${Object.entries(set)
        .map(([k, v]) => `[${JSON.stringify(k)}] = ${JSON.stringify(v)}`)
        .join(', ')} }`,
  );
  writeFileSync(
    file,
    `local sets = { ${sets.join(', ')} }
local requests = {}
local i = 0
init = function(args)
  for n, set in ipairs(sets) do
    local headers = {}
    for k, v in pairs(wrk.headers) do headers[k] = v end
    for k, v in pairs(set) do headers[k] = v end
    requests[n] = wrk.format(nil, nil, headers)
  end
end
request = function()
  i = i % #requests + 1
  return requests[i]
end
`,
  );
  return file;
}

function runWrk({ url, headers, headerSets, durationS, connections, pinCore, threads, method, body }) {
  const args = [
    `-t${threads}`,
    `-c${Math.max(connections, threads)}`,
    `-d${durationS}s`,
    '--latency',
    '--timeout',
    '5s',
  ];
  for (const [name, value] of Object.entries(headers)) args.push('-H', `${name}: ${value}`);
  const script =
    headerSets !== undefined
      ? roundRobinScript(headerSets)
      : method !== undefined
        ? bodyScript(method, body)
        : undefined;
  if (script !== undefined) args.push('-s', script);
  args.push(url);
  const [cmd, argv] = pinCore === undefined ? ['wrk', args] : ['taskset', ['-c', String(pinCore), 'wrk', ...args]];
  return new Promise((resolve, reject) => {
    const child = spawn(cmd, argv, { stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    child.stdout.on('data', (chunk) => (out += chunk));
    child.stderr.on('data', (chunk) => (out += chunk));
    // Bounded: wrk stops itself after durationS; this is the backstop.
    const killer = setTimeout(() => child.kill('SIGKILL'), (durationS + 15) * 1000);
    child.on('error', reject);
    child.on('close', (code) => {
      clearTimeout(killer);
      if (script !== undefined) rmSync(script, { force: true });
      const rps = /Requests\/sec:\s+([\d.]+)/.exec(out);
      if (code !== 0 || rps === null) return reject(new Error(`wrk failed (exit ${code}):\n${out}`));
      const socketErrors = /Socket errors: connect (\d+), read (\d+), write (\d+), timeout (\d+)/.exec(out);
      resolve({
        rps: Number(rps[1]),
        p50: percentile(out, '50%'),
        p90: percentile(out, '90%'),
        p99: percentile(out, '99%'),
        non2xx: Number(/Non-2xx or 3xx responses:\s+(\d+)/.exec(out)?.[1] ?? 0),
        errors: socketErrors === null ? 0 : socketErrors.slice(1).reduce((sum, n) => sum + Number(n), 0),
      });
    });
  });
}

const UNIT_MS = { us: 0.001, ms: 1, s: 1000, m: 60_000, h: 3_600_000 };

function percentile(out, label) {
  const match = new RegExp(`^\\s*${label}\\s+([\\d.]+)(us|ms|s|m|h)\\s*$`, 'm').exec(out);
  return match === null ? NaN : Number(match[1]) * UNIT_MS[match[2]];
}

async function runAutocannon({ url, headers, headerSets, durationS, connections, method, body }) {
  const { default: autocannon } = await import('autocannon');
  // Each connection goes round `requests` in order.
  const requests = headerSets?.map((set) => ({ headers: { ...headers, ...set } }));
  const result = await autocannon({
    url,
    headers,
    connections,
    duration: durationS,
    timeout: 5,
    ...(requests === undefined ? {} : { requests }),
    ...(method === undefined ? {} : { method, body }),
  });
  return {
    rps: result.requests.total / (result.duration || durationS),
    p50: result.latency.p50,
    p90: result.latency.p90,
    p99: result.latency.p99,
    non2xx: result.non2xx,
    errors: result.errors + result.timeouts,
  };
}
