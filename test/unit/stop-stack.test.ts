// The composition root's stop stack (src/stop-stack.ts): each part pushes its stop as it starts;
// a failed start and close() run them last first, all of them, whatever one of them throws.
import { describe, expect, test } from 'vitest';
import { createStopStack } from '../../src/stop-stack.js';

describe('stop stack', () => {
  test('runs the stops in reverse order of pushing, each once, waiting for each', async () => {
    const stops = createStopStack();
    const ran: string[] = [];
    stops.push(() => void ran.push('limits'));
    stops.push(async () => {
      await new Promise((r) => setImmediate(r));
      ran.push('front');
    });
    stops.push(() => void ran.push('registry'));
    await stops.unwind();
    expect(ran).toEqual(['registry', 'front', 'limits']);
    await stops.unwind();
    expect(ran).toEqual(['registry', 'front', 'limits']);
  });

  test('a stop that throws does not keep the others from running; the first error is thrown at the end', async () => {
    const stops = createStopStack();
    const ran: string[] = [];
    stops.push(() => void ran.push('first pushed'));
    stops.push(() => {
      throw new Error('second');
    });
    stops.push(async () => {
      ran.push('third');
      throw new Error('third');
    });
    await expect(stops.unwind()).rejects.toThrow('third');
    expect(ran).toEqual(['third', 'first pushed']);
  });
});
