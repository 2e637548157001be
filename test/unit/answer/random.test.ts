import { describe, expect, it } from 'vitest';
import { compileTemplate, createAnswerRandom, randomIntBetween, randomUuid } from '../../../src/expression/index.js';
import { makeContext } from '../../helpers/answer.js';

const PINNED_DRAWS = [440330059, 3316453360];
const PINNED_UUID = '1a3ee74b-c5ad-4ff0-9b64-24a72cce418e';

function draws(seed: number, endpoint: string, by: number | string, count = 4): number[] {
  const random = createAnswerRandom(seed, endpoint, by);
  return Array.from({ length: count }, () => random.nextUint32());
}

describe('createAnswerRandom: values depend only on the seed, the endpoint and n (or seedBy)', () => {
  it.each<[string, [number, string, number | string], [number, string, number | string], boolean]>([
    ['same seed, endpoint and n', [1, 'GET /a', 5], [1, 'GET /a', 5], true],
    ['same seedBy value', [1, 'GET /a', 'user-7'], [1, 'GET /a', 'user-7'], true],
    ['another n', [1, 'GET /a', 5], [1, 'GET /a', 6], false],
    ['another seed', [1, 'GET /a', 5], [2, 'GET /a', 5], false],
    ['another endpoint', [1, 'GET /a', 5], [1, 'GET /b', 5], false],
    ['another seedBy value', [1, 'GET /a', 'user-7'], [1, 'GET /a', 'user-8'], false],
    ['a seedBy value vs the same request number', [1, 'GET /a', '5'], [1, 'GET /a', 5], false],
  ])('%s', (_name, a, b, same) => {
    if (same) expect(draws(...a)).toEqual(draws(...b));
    else expect(draws(...a)).not.toEqual(draws(...b));
  });

  it('is reproducible across processes: fixed values for a fixed seed', () => {
    // Pinned so a change of the hashing (which would reshuffle every user's seeded answers) is noticed.
    expect(draws(42, 'GET /users/:id', 1, 2)).toEqual(PINNED_DRAWS);
    expect(randomUuid(createAnswerRandom(42, 'GET /users/:id', 1))).toBe(PINNED_UUID);
  });

  it('fakerSeed is fixed per source and does not depend on draws made before', () => {
    const a = createAnswerRandom(7, 'GET /a', 3);
    const b = createAnswerRandom(7, 'GET /a', 3);
    a.next();
    a.next();
    expect(a.fakerSeed).toBe(b.fakerSeed);
    expect(createAnswerRandom(7, 'GET /a', 4).fakerSeed).not.toBe(a.fakerSeed);
  });

  it('next() is uniform enough: 10,000 draws fill ten buckets evenly', () => {
    const random = createAnswerRandom(3, 'GET /x', 1);
    const buckets = new Array<number>(10).fill(0);
    for (let i = 0; i < 10_000; i++) buckets[Math.floor(random.next() * 10)]! += 1;
    for (const count of buckets) expect(count).toBeGreaterThan(850);
  });

  it('randomIntBetween covers large spans and refuses non-integers', () => {
    const random = createAnswerRandom(3, 'GET /x', 1);
    const big = randomIntBetween(random, 0, Number.MAX_SAFE_INTEGER) as number;
    expect(Number.isSafeInteger(big)).toBe(true);
    expect(randomIntBetween(random, 0.5, 3)).toBeUndefined();
  });
});

describe('seeded answers through a template', () => {
  const template = compileTemplate({
    id: '${uuid()}',
    n: '${randomInt(1, 1000000)}',
    list: { $repeat: 3, $item: '${uuid()}' },
  });
  if (!template.ok) throw new Error('template did not compile');
  const answer = (seed: number, n: number): unknown =>
    template.value.evaluate(makeContext({ request: n, random: createAnswerRandom(seed, 'POST /payments', n) }));

  it('the same seed, endpoint and n give the same answer; another n another one', () => {
    expect(answer(9, 3)).toEqual(answer(9, 3));
    expect(answer(9, 3)).not.toEqual(answer(9, 4));
    expect(answer(9, 3)).not.toEqual(answer(10, 3));
  });

  it('the items of a $repeat differ from each other', () => {
    const { list } = answer(9, 3) as { list: string[] };
    expect(new Set(list).size).toBe(3);
  });
});
