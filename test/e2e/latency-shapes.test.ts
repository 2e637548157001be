// SPEC §10's latency shapes and the seeded fault draw: distributions over enough draws (unit), and
// the drawn delays of a served endpoint read back from its log (black box), both with a seed.
import { afterAll, describe, expect, test } from 'vitest';
import { createResilienceSource, pickFault, shapeDelay } from '../../src/pipeline/resilience.js';
import type { FaultConfig } from '../../src/config/types.js';
import { runCli, startServe, stopAll, tempDir, waitFor, writeConfig } from '../helpers/cli.js';

afterAll(stopAll);

function quantile(sorted: number[], q: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]!;
}

describe('shapes drawn from the seeded stream', () => {
  const N = 20_000;
  function draws(shape: Parameters<typeof shapeDelay>[0], seed = 1): number[] {
    const source = createResilienceSource();
    return Array.from({ length: N }, () => source.delay(seed, 'GET /x', shape)).sort((a, b) => a - b);
  }

  test('{ min, max } is uniform between min and max', () => {
    const d = draws({ kind: 'uniform', minMs: 100, maxMs: 300 });
    expect(d[0]).toBeGreaterThanOrEqual(100);
    expect(d[N - 1]).toBeLessThanOrEqual(300);
    expect(quantile(d, 0.25)).toBeGreaterThan(145);
    expect(quantile(d, 0.25)).toBeLessThan(155);
    expect(quantile(d, 0.5)).toBeGreaterThan(195);
    expect(quantile(d, 0.5)).toBeLessThan(205);
    expect(quantile(d, 0.75)).toBeGreaterThan(245);
    expect(quantile(d, 0.75)).toBeLessThan(255);
  });

  test('{ median, p99 } is log-normal: half below the median, 99% below p99', () => {
    const d = draws({ kind: 'lognormal', medianMs: 80, p99Ms: 2000 });
    expect(quantile(d, 0.5)).toBeGreaterThan(76);
    expect(quantile(d, 0.5)).toBeLessThan(84);
    expect(quantile(d, 0.99)).toBeGreaterThan(1800);
    expect(quantile(d, 0.99)).toBeLessThan(2200);
    // log-normal, not uniform: the mean lies well above the median (a long tail)
    expect(d.reduce((a, b) => a + b, 0) / N).toBeGreaterThan(150);
  });

  test('median = p99 is a fixed delay', () => {
    expect(new Set(draws({ kind: 'lognormal', medianMs: 50, p99Ms: 50 }))).toEqual(new Set([50]));
  });

  test('the same seed gives the same delays; another seed others', () => {
    const shape = { kind: 'uniform', minMs: 0, maxMs: 1000 } as const;
    expect(draws(shape, 7)).toEqual(draws(shape, 7));
    const a = createResilienceSource();
    const b = createResilienceSource();
    expect(Array.from({ length: 20 }, () => a.delay(7, 'GET /x', shape))).not.toEqual(
      Array.from({ length: 20 }, () => b.delay(8, 'GET /x', shape)),
    );
  });

  test('a fault is picked by the running total of the rates; at most one per request', () => {
    const faults = [
      { kind: 'reset', rate: 0.1 },
      { kind: 'close', rate: 0.2 },
    ] as FaultConfig[];
    expect(pickFault(faults, 0.05)?.kind).toBe('reset');
    expect(pickFault(faults, 0.1)?.kind).toBe('close');
    expect(pickFault(faults, 0.29)?.kind).toBe('close');
    expect(pickFault(faults, 0.31)).toBeUndefined();
    const source = createResilienceSource();
    const counts: Record<string, number> = {};
    for (let i = 0; i < N; i++) {
      const kind = source.fault(3, 'GET /x', faults)?.kind ?? 'none';
      counts[kind] = (counts[kind] ?? 0) + 1;
    }
    expect(counts.reset! / N).toBeCloseTo(0.1, 1);
    expect(counts.close! / N).toBeCloseTo(0.2, 1);
  });
});

describe('a served latency shape', () => {
  const KEY = 'mk_shapesTest00000000000000000000001';
  async function servedDelays(count: number): Promise<number[]> {
    const dir = await tempDir('mockapi-shapes-');
    const file = await writeConfig(
      dir,
      `apiKey: ${KEY}\nseed: 11\nendpoints:\n  - method: GET\n    path: /tail\n    delay: { median: 20ms, p99: 200ms }\n`,
    );
    const proc = await startServe(['-c', file, '--no-state', '--log', 'json']);
    // Sent together: the arrival order may differ between runs, the delays drawn may not.
    await Promise.all(
      Array.from({ length: count }, () =>
        fetch(`${proc.mock}/tail`, { headers: { 'x-api-key': KEY } }).then((r) => r.text()),
      ),
    );
    const notes = await waitFor(() => {
      const lines = proc
        .stdout()
        .split('\n')
        .filter((l) => l.startsWith('{'));
      return lines.length >= count ? lines.map((l) => (JSON.parse(l) as { note: string }).note) : undefined;
    });
    await proc.stop();
    return notes.map((n) => Number(/^delay: (\d+) ms$/.exec(n)![1])).sort((a, b) => a - b);
  }

  test(
    'with a seed, the delays drawn follow the shape and are the same in every run',
    { timeout: 30_000 },
    async () => {
      const first = await servedDelays(400);
      expect(quantile(first, 0.5)).toBeGreaterThanOrEqual(17);
      expect(quantile(first, 0.5)).toBeLessThanOrEqual(23);
      expect(quantile(first, 0.99)).toBeGreaterThanOrEqual(130);
      expect(quantile(first, 0.99)).toBeLessThanOrEqual(300);
      expect(await servedDelays(400)).toEqual(first);
    },
  );
});

describe('config errors name the field, line and column', () => {
  test('bad shapes, fault fields and rates, header styles, quotaRetryAfter', async () => {
    const dir = await tempDir('mockapi-shapes-config-');
    const file = await writeConfig(
      dir,
      [
        'apiKey: mk_x',
        'limits:',
        '  headers: [legacy, rfc]',
        '  quotaRetryAfter: 1.5ms',
        'endpoints:',
        '  - method: GET',
        '    path: /a',
        '    delay: { min: 300ms, max: 100ms }',
        '    faults: [{ kind: reset, rate: 0.6 }, { kind: close, rate: "50%" }]',
        '  - method: GET',
        '    path: /b',
        '    delay: { min: 1ms, p99: 2s }',
        '    faults:',
        '      - { kind: explode, rate: 0.1 }',
        '      - { kind: slow, rate: 0.1, after: 1s }',
        '  - method: GET',
        '    path: /c',
        '    delay: { median: 0ms, p99: 1s }',
        '    response: { faults: [{ kind: hang, rate: 2 }] }',
        '',
      ].join('\n'),
    );
    const { code, stderr } = await runCli(['validate', '-c', file]);
    expect(code).toBe(1);
    for (const line of [
      'mockapi.yaml:3:21: limits.headers[1] must be legacy, ietf, x or none, got "rfc"',
      'mockapi.yaml:4:20: limits.quotaRetryAfter must be a whole number of milliseconds, got "1.5ms"',
      'mockapi.yaml:8:31: endpoints[0].delay.max must be at least min ("300ms"), got "100ms"',
      'mockapi.yaml:9:13: endpoints[0].faults rates add up to 110%, more than 100% (a request gets at most one fault); lower them',
      'mockapi.yaml:12:12: endpoints[1].delay must be a latency shape: either { min, max } (uniform) or { median, p99 } (log-normal), got { min, p99 }',
      'mockapi.yaml:14:17: endpoints[1].faults[0].kind must be one of reset, close, hang, slow, truncate, got "explode"',
      'mockapi.yaml:15:34: endpoints[1].faults[1].after only applies to kind hang, not slow; remove it',
      'mockapi.yaml:18:22: endpoints[2].delay.median must be longer than 0, got "0ms"',
      'mockapi.yaml:19:46: endpoints[2].response.faults[0].rate must be between 0 and 1, got 2',
    ]) {
      expect(stderr).toContain(line);
    }
  });
});
