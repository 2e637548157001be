// `mockapi verify` of 1,000 endpoints against the same 1,000 requests from a plain HTTP client
// (bench/verify.js has the measurement and runs on its own too).
import { measureVerify } from '../verify.js';
import { opts, SERVER_CORE } from '../lib/options.js';
import { record, fmtMs } from '../lib/report.js';

export async function verifyScenario() {
  const r = await measureVerify({ endpoints: 1000, rounds: opts.rounds, concurrency: 4, processRounds: 3, pin: SERVER_CORE });
  const rounds = r.runs.map((run) => (run.verify / run.client).toFixed(2)).join(' / ');
  record('verify 1,000 endpoints vs a plain client', `${fmtMs(r.verifyMs)} vs ${fmtMs(r.clientMs)}`, { ratio: r.ratio, max: 1.5 }, `upstream answering at once on loopback, 4 at a time; the verification after setup, medians; rounds ${rounds}`);
  record('verify: setup of 1,000 endpoints', fmtMs(r.setupMs), undefined, 'read and check the config, start the mock in its thread');
  record('verify: the whole command vs a whole plain-client process', `${fmtMs(r.processVerifyMs)} vs ${fmtMs(r.processClientMs)}`, undefined, `${r.processRatio.toFixed(2)}×; node's start and a cold JIT on both sides, the setup above on verify's`);
}
