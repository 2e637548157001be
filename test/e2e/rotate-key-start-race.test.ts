// rotate-key while a server is starting (issue "Reliability III", item 10): a rotation that finds
// no registered server must be able to rely on every server that registers later reading the new
// file — so a server registers before its last read of the config, and the old key is never
// accepted once rotate-key has exited, whichever of the two got ahead.
import { describe, expect, it } from 'vitest';
import { startMockServer } from '../../src/index.js';
import { removeDir, tempDir, writeConfig } from '../helpers/cli.js';
import { rotateIn } from '../helpers/rotate.js';

const OLD_KEY = 'mk_raceOldKey0123456789abcdefghijk';
const CONFIG = `project: race\napiKey: ${OLD_KEY}\nendpoints:\n  - method: GET\n    path: /ping\n`;
const ROUNDS = 60;

async function status(base: string, key: string): Promise<number> {
  const res = await fetch(`${base}/mock/ping`, { headers: { 'x-api-key': key } });
  await res.body?.cancel();
  return res.status;
}

const delay = (ms: number) => new Promise((done) => setTimeout(done, ms));

describe('rotate-key racing a starting server', () => {
  it(`the old key is never accepted after rotate-key exits (${ROUNDS} rounds, the rotation started at points spread over the start)`, async () => {
    // How long a start takes here, to spread the rotations over it.
    const probeDir = await tempDir('mockapi-rotate-race-');
    const began = performance.now();
    const probe = await startMockServer({ config: await writeConfig(probeDir, CONFIG), port: 0, watch: true });
    const startMs = performance.now() - began;
    await probe.close();
    await removeDir(probeDir);

    const accepted: string[] = [];
    for (let round = 0; round < ROUNDS; round++) {
      const dir = await tempDir('mockapi-rotate-race-');
      try {
        const file = await writeConfig(dir, CONFIG);
        const starting = startMockServer({ config: file, port: 0, watch: true });
        await delay(((round % 20) / 20) * startMs * 1.2);
        const rotation = await rotateIn(file);
        expect(rotation.code, rotation.err.join('\n')).toBe(0);
        const server = await starting;
        try {
          // rotate-key has exited: from here on, the old key is refused, and the new one taken.
          const old = await status(server.url, OLD_KEY);
          if (old !== 401) accepted.push(`round ${round}: old key got ${old} after "${rotation.err.join(' / ')}"`);
          const fresh = await status(server.url, rotation.out[0]!);
          if (fresh !== 200) accepted.push(`round ${round}: new key got ${fresh} after "${rotation.err.join(' / ')}"`);
        } finally {
          await server.close();
        }
      } finally {
        await removeDir(dir);
      }
    }
    expect(accepted).toEqual([]);
  }, 120_000);
});
