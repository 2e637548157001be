// The interleaved rounds the scenarios measure in: a warm-up of each item, then `opts.rounds`
// rounds, every other one in reverse order, each measured load after a settle load, so that no
// item always runs first or last while the machine's speed drifts.
import { opts, progress } from './options.js';
import { fmtRps } from './report.js';

/**
 * Runs `load(item, seconds)` for each item (each with a `key` and a `label`): warm-up, then the
 * rounds; the measured results by item key, in round order. `said` adds to a round's progress line.
 */
export async function interleavedRounds(name, items, load, said = () => '') {
  progress(`${name} warm-up: ${opts.warmupS} s each`);
  for (const item of items) await load(item, opts.warmupS);
  const runs = Object.fromEntries(items.map((item) => [item.key, []]));
  for (let round = 1; round <= opts.rounds; round++) {
    const order = round % 2 === 1 ? items : [...items].reverse();
    for (const item of order) {
      await load(item, opts.settleS);
      const result = await load(item, opts.durationS);
      runs[item.key].push(result);
      progress(`round ${round}/${opts.rounds} ${item.label}: ${fmtRps(result.rps)}${said(result)}`);
    }
  }
  return runs;
}
