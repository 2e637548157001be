/**
 * Edit distance counting insertions, deletions, substitutions and swaps of neighbours (`prot` →
 * `port` is one edit), stopping early once it exceeds `max`.
 */
function distance(a: string, b: string, max: number): number {
  if (Math.abs(a.length - b.length) > max) return max + 1;
  let before: number[] = [];
  let prev = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const row = [i];
    let best = i;
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      let value = Math.min((prev[j] as number) + 1, (row[j - 1] as number) + 1, (prev[j - 1] as number) + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) {
        value = Math.min(value, (before[j - 2] as number) + 1);
      }
      row.push(value);
      if (value < best) best = value;
    }
    if (best > max) return max + 1;
    before = prev;
    prev = row;
  }
  return prev[b.length] as number;
}

/**
 * The known field `name` was most likely meant to be: same letters in another case, or at most two
 * edits away (one for short names, so `id` does not suggest `ip`). `undefined` when none is close.
 */
export function suggestField(name: string, known: readonly string[]): string | undefined {
  const lower = name.toLowerCase().replace(/[-_ ]/g, '');
  let best: string | undefined;
  let bestScore = Infinity;
  for (const candidate of known) {
    const target = candidate.toLowerCase();
    const max = Math.min(2, Math.floor(Math.max(lower.length, target.length) / 3));
    const score = lower === target ? 0 : distance(lower, target, max);
    if (score <= max && score < bestScore) {
      best = candidate;
      bestScore = score;
    }
  }
  return best;
}

/** Fields users put one level too high or too low, and where they belong. Keys are field paths with `[]` for list items. */
const MISPLACED: Record<string, Record<string, string>> = {
  '': {
    port: 'server.port',
    host: 'server.host',
    cors: 'server.cors',
    maxBodySize: 'server.maxBodySize',
    rateLimit: 'limits.rateLimit',
    monthlyQuota: 'limits.monthlyQuota',
    requests: 'limits.rateLimit.requests',
    window: 'limits.rateLimit.window',
  },
  server: { seed: 'seed (at the top level)' },
  limits: { requests: 'limits.rateLimit.requests', window: 'limits.rateLimit.window' },
  'endpoints[]': {
    status: 'response.status',
    headers: 'response.headers',
    body: 'response.body',
    bodyFile: 'response.bodyFile',
  },
  'endpoints[].response': {
    failRate: 'failRate (on the endpoint, beside method and path)',
    delay: 'delay (on the endpoint, beside method and path)',
  },
};

/** Where an unknown field `name` under `parent` (a field path, lists as `[]`) belongs, when it is a known misplacement. */
export function misplacedField(parent: string, name: string): string | undefined {
  const fields = Object.hasOwn(MISPLACED, parent) ? MISPLACED[parent] : undefined;
  return fields !== undefined && Object.hasOwn(fields, name) ? fields[name] : undefined;
}
