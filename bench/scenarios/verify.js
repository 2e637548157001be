// `mockapi verify` of 1,000 endpoints against the same 1,000 requests from a plain HTTP client
// (bench/verify.js has the measurement and runs on its own too). With `--compare <bin>`, that
// build's verification runs in the same interleaved rounds (before/after).
import { dirname, join } from 'node:path';
import { measureVerify } from '../verify.js';
import { flags, opts, SERVER_CORE } from '../lib/options.js';
import { record, fmtMs } from '../lib/report.js';

export async function verifyScenario() {
  const compare = flags.compare === undefined ? undefined : join(dirname(flags.compare), '..');
  const r = await measureVerify({
    endpoints: 1000,
    rounds: opts.rounds,
    concurrency: 4,
    processRounds: 3,
    pin: SERVER_CORE,
    compare,
  });
  const rounds = r.runs.map((run) => (run.this / run.client).toFixed(2)).join(' / ');
  const before =
    r.previous === undefined
      ? ''
      : `; previous build ${fmtMs(r.previous.verifyMs)}, ${r.previous.ratio.toFixed(2)}× (rounds ${r.runs.map((run) => (run.previous / run.client).toFixed(2)).join(' / ')}), CPU ${r.previous.cpuRatio.toFixed(2)}×`;
  record(
    'verify 1,000 endpoints vs a plain client',
    `${fmtMs(r.verifyMs)} vs ${fmtMs(r.clientMs)}`,
    { ratio: r.ratio, max: 1.5 },
    `upstream answering at once on loopback, 4 at a time; the verification after setup, medians; rounds ${rounds}; CPU ${r.cpuRatio.toFixed(2)}× the client's${before}`,
  );
  record(
    'verify: setup of 1,000 endpoints',
    fmtMs(r.setupMs),
    undefined,
    `read and check the config, start the mock in its thread${r.previous === undefined ? '' : `; previous build ${fmtMs(r.previous.setupMs)}`}`,
  );
  record(
    'verify: the whole command vs a whole plain-client process',
    `${fmtMs(r.processVerifyMs)} vs ${fmtMs(r.processClientMs)}`,
    undefined,
    `${r.processRatio.toFixed(2)}×; node's start and a cold JIT on both sides, the setup above on verify's${r.previous === undefined ? '' : `; previous build ${fmtMs(r.previous.processVerifyMs)}`}`,
  );
}
