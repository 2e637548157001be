// Load generators: wrk when it is on PATH (a separate C process, far lighter than any JS client),
// autocannon in-process otherwise. Both report requests/s, p50/p99 latency in ms and the
// number of answers that were not 2xx (a throughput figure with refusals in it is not valid).
import { spawn, spawnSync } from 'node:child_process';

/** 'wrk' when the wrk binary runs, else 'autocannon'. */
export function defaultTool() {
  const probe = spawnSync('wrk', ['--version'], { encoding: 'utf8' });
  return probe.error === undefined ? 'wrk' : 'autocannon';
}

/**
 * Runs one load of `durationS` seconds against `url` with `connections` keep-alive connections.
 * `pinCore`: the core wrk runs on (autocannon runs where the driver runs).
 * @returns {Promise<{rps: number, p50: number, p90: number, p99: number, non2xx: number, errors: number}>}
 */
export function runLoad({ tool, url, headers = {}, durationS, connections, pinCore }) {
  return tool === 'wrk' ? runWrk({ url, headers, durationS, connections, pinCore }) : runAutocannon({ url, headers, durationS, connections });
}

function runWrk({ url, headers, durationS, connections, pinCore }) {
  const args = ['-t1', `-c${connections}`, `-d${durationS}s`, '--latency', '--timeout', '5s'];
  for (const [name, value] of Object.entries(headers)) args.push('-H', `${name}: ${value}`);
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

async function runAutocannon({ url, headers, durationS, connections }) {
  const { default: autocannon } = await import('autocannon');
  const result = await autocannon({ url, headers, connections, duration: durationS, timeout: 5 });
  return {
    rps: result.requests.total / (result.duration || durationS),
    p50: result.latency.p50,
    p90: result.latency.p90,
    p99: result.latency.p99,
    non2xx: result.non2xx,
    errors: result.errors + result.timeouts,
  };
}
