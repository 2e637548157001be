// chain() (src/http/steps.ts): the steps composed once, each one's `next` the rest.
import { describe, expect, test, vi } from 'vitest';
import { bodyNeedOf, chain, type Step } from '../../src/http/steps.js';
import { compiled, exchange } from './fakes.js';

const config = await compiled({ endpoints: [{ method: 'GET', path: '/users/:id', response: { body: { id: 1 } } }] });

/** A step that records its name and passes the request on (or answers, when `answers`). */
function step(name: string, ran: string[], answers = false): Step {
  return { name, run: (x, next) => (ran.push(name), answers ? undefined : next(x)) };
}

describe('chain', () => {
  test('runs the steps in order; one that answers ends the walk; `last` runs when all passed', () => {
    const ran: string[] = [];
    const last = vi.fn();
    const run = chain([step('a', ran), step('b', ran), step('c', ran)], last);
    run(exchange(config));
    expect(ran).toEqual(['a', 'b', 'c']);
    expect(last).toHaveBeenCalledTimes(1);

    ran.length = 0;
    const stopped = chain([step('a', ran), step('b', ran, true), step('c', ran)], last);
    stopped(exchange(config));
    expect(ran).toEqual(['a', 'b']);
    expect(last).toHaveBeenCalledTimes(1);
  });

  test('is built once: a step sees the steps after it at build time, and the same `next` on every request', () => {
    const nexts = new Set<unknown>();
    const linked: string[][] = [];
    const first: Step = {
      name: 'first',
      run: (x, next) => (nexts.add(next), next(x)),
      link: (later) => linked.push(later.map((s) => s.name)),
    };
    const run = chain([first, { name: 'second', run: () => {} }, { name: 'third', run: () => {} }], () => {});
    expect(linked).toEqual([['second', 'third']]);
    for (let i = 0; i < 3; i++) run(exchange(config));
    expect(nexts.size).toBe(1);
  });

  test('an async step goes on when it is ready, with the same exchange', async () => {
    const ran: string[] = [];
    const later: Step = {
      name: 'store',
      run: (x, next) => void Promise.resolve().then(() => (ran.push('store'), next(x))),
    };
    const seen = vi.fn();
    const x = exchange(config);
    chain([later, step('after', ran)], seen)(x);
    expect(ran).toEqual([]);
    await vi.waitFor(() => expect(seen).toHaveBeenCalledWith(x));
    expect(ran).toEqual(['store', 'after']);
  });
});

describe('bodyNeedOf', () => {
  const endpoint = config.endpoints[0]!;
  test('the first step that names a target decides it; the strongest need wins', () => {
    const targets: unknown[] = [];
    const steps: Step[] = [
      { name: 'stubs', run: () => {}, target: () => undefined },
      { name: 'match', run: () => {}, target: () => endpoint },
      { name: 'never asked', run: () => {}, target: () => undefined },
      { name: 'proxy', run: () => {}, wantsWholeBody: (_x, target) => (targets.push(target), 'whole') },
    ];
    expect(bodyNeedOf(steps, exchange(config))).toBe('whole');
    expect(targets).toEqual([endpoint]);
    steps.push({ name: 'answer', run: () => {}, wantsWholeBody: () => 'value' });
    expect(bodyNeedOf(steps, exchange(config))).toBe('value');
    expect(bodyNeedOf([{ name: 'plain', run: () => {} }], exchange(config))).toBe('journal');
  });
});
