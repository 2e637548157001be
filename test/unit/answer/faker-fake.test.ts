import { describe, expect, it } from 'vitest';
import { FAKER_API } from '../../../src/expression/index.js';
import { installFastFake, type FakeableFaker } from '../../../src/expression/faker-fake.js';
import { sfc32 } from '../../../src/seeded.js';

type AnyFaker = FakeableFaker & Record<string, Record<string, (...args: unknown[]) => unknown>>;
type FakerClass = new (options: { locale: unknown; randomizer: { next(): number; seed(): void } }) => AnyFaker;

/** A faker instance drawing from sfc32 at `seed`, as the server's (expression/faker.ts) does. */
async function instance(seed: number): Promise<AnyFaker> {
  const { faker } = await import('@faker-js/faker/locale/en');
  const next = sfc32(seed, 0x9e3779b9, 0x243f6a88);
  const own = new (faker.constructor as unknown as FakerClass)({
    locale: faker.rawDefinitions,
    randomizer: { next: () => next() / 4294967296, seed: () => {} },
  });
  (own as unknown as { setDefaultRefDate(d: string): void }).setDefaultRefDate('2025-01-01T00:00:00.000Z');
  return own;
}

function outcome(run: () => unknown): string {
  try {
    return JSON.stringify(run(), (_, v: unknown) => (typeof v === 'bigint' ? `${v}n` : v)) ?? 'undefined';
  } catch (error) {
    return `throws ${(error as Error).message}`;
  }
}

describe('installFastFake: faker patterns, mustache and uuid made faster give the same values from the same draws', () => {
  it('every fake.* method, 40 calls each on a shared stream, reads as with faker own helpers.fake, mustache and uuid', async () => {
    const plain = await instance(7);
    const fast = installFastFake(await instance(7));
    let compared = 0;
    for (const [module, methods] of FAKER_API)
      for (const method of methods) {
        const name = `${module}.${method}`;
        for (let i = 0; i < 40; i++) {
          const args = module === 'helpers' ? [['a', 'b', 'c']] : [];
          expect(
            outcome(() => fast[module]?.[method]?.(...args)),
            `${name} call ${i}`,
          ).toBe(outcome(() => plain[module]?.[method]?.(...args)));
          compared++;
        }
      }
    expect(compared).toBeGreaterThan(1000);
  });

  it('uuid with options is faker own (v7 from its refDate), and both versions stay in step with the stream', async () => {
    const plain = await instance(11);
    const fast = installFastFake(await instance(11));
    for (let i = 0; i < 20; i++) {
      for (const options of [
        undefined,
        { version: 7 },
        { version: 4 },
        { version: 7, refDate: '2030-01-01T00:00:00.000Z' },
      ]) {
        expect(
          outcome(() => fast.string.uuid(options)),
          JSON.stringify(options),
        ).toBe(outcome(() => plain.string.uuid(options)));
      }
    }
  });

  it('patterns with unknown tokens, lists, arguments and nested braces read as faker reads them', async () => {
    const plain = await instance(3);
    const fast = installFastFake(await instance(3));
    const patterns = [
      '{{person.firstName}} {{person.lastName}}',
      '{{location.street_name}}x',
      'no tokens',
      '{{person.nope}}',
      '{{number.int(5)}}',
      '{{person.}}',
      '{{{{person.firstName}}}}',
      '{{Upper.case}}',
      ['{{person.firstName}}', 'fixed'],
      '{{person}}',
      '{{location.city_name}} {{company.name}}',
    ];
    for (let round = 0; round < 20; round++) {
      for (const pattern of patterns)
        expect(
          outcome(() => fast.helpers.fake(pattern)),
          JSON.stringify(pattern),
        ).toBe(outcome(() => plain.helpers.fake(pattern)));
    }
  });
});
