import { describe, expect, it } from 'vitest';
import { openBus, sessionBuses, type Bus } from '../../src/fleet/bus.js';
import type { FleetConnection } from '../../src/fleet/connection.js';
import { SCOPE_CHANGES } from '../../src/fleet/scope.js';
import type { Logger } from '../../src/logger.js';

/** One channel in memory: PUBLISH reaches every subscriber (the publisher's own too), in order. */
function fakeChannel(): () => FleetConnection {
  const listeners: ((message: string) => void)[] = [];
  return () =>
    ({
      up: true,
      url: 'redis://fake',
      async send(args: string[]) {
        if (args[0] !== 'PUBLISH') throw new Error(`unexpected ${args[0]}`);
        const message = args[2] as string;
        for (const listener of [...listeners]) queueMicrotask(() => listener(message));
        return listeners.length;
      },
      async subscribe(_channel: string, listener: (message: string) => void) {
        listeners.push(listener);
      },
    }) as unknown as FleetConnection;
}

function recordingLogger(): Logger & { warnings: string[] } {
  const warnings: string[] = [];
  return { warnings, info() {}, warn: (message: string) => void warnings.push(message), error() {} };
}

async function twoHosts(): Promise<{ a: Bus; c: Bus; warnings: string[] }> {
  const connect = fakeChannel();
  const logger = recordingLogger();
  const a = await openBus(connect(), 'ch', 'A', recordingLogger());
  const c = await openBus(connect(), 'ch', 'C', logger);
  sessionBuses(a, SCOPE_CHANGES);
  sessionBuses(c, SCOPE_CHANGES); // C holds no session: no part of it registered a handler
  return { a, c, warnings: logger.warnings };
}

describe("the fleet's session buses", () => {
  it.each(SCOPE_CHANGES)(
    'a host that holds no session answers a session change %s at once, without a warning',
    async (op) => {
      const { a, warnings } = await twoHosts();
      const answered = await a.announce({ op: `session:${op}`, session: 'ws5' }, { expect: ['C'] });
      expect(answered).toEqual({ acked: ['C'], failed: [], missing: [] });
      expect(warnings).toEqual([]);
    },
  );

  it("reaches the handler of the session that holds it, and only that session's", async () => {
    const connect = fakeChannel();
    const a = sessionBuses(await openBus(connect(), 'ch', 'A', recordingLogger()), SCOPE_CHANGES);
    const c = sessionBuses(await openBus(connect(), 'ch', 'C', recordingLogger()), SCOPE_CHANGES);
    const heard: string[] = [];
    c.of('ws5').handle('stub', (change, from) => void heard.push(`ws5 ${change.op} ${String(change.n)} from ${from}`));
    c.of('ws6').handle('stub', (change) => void heard.push(`ws6 ${change.op}`));
    await a.of('ws5').announce({ op: 'stub', n: 1 }, { expect: ['C'] });
    expect(heard).toEqual(['ws5 stub 1 from A']);
  });

  it('a change no version of this one knows is answered with an error and noted once', async () => {
    const { a, warnings } = await twoHosts();
    for (let i = 0; i < 2; i++) {
      const answered = await a.announce({ op: 'session:teleport', session: 'ws5' }, { expect: ['C'] });
      expect(answered).toEqual({
        acked: [],
        failed: [{ host: 'C', error: 'unknown change session:teleport' }],
        missing: [],
      });
    }
    expect(warnings).toEqual([
      'fleet: skipped a change "session:teleport" from host A that this version of mockapi does not know',
    ]);
  });

  it('refuses a session part that handles a change it does not route', async () => {
    const connect = fakeChannel();
    const buses = sessionBuses(await openBus(connect(), 'ch', 'A', recordingLogger()), SCOPE_CHANGES);
    expect(() => buses.of('ws5').handle('teleport', () => {})).toThrow(
      'the fleet routes no session change "teleport": add it to SCOPE_CHANGES',
    );
  });
});
