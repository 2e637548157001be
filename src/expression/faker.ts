import type { AnswerRandom } from './context.js';
import { sfc32 } from '../seeded.js';
import { installFastFake, type FakeableFaker } from './faker-fake.js';
import { FORBIDDEN_NAMES, toJsonValue } from './values.js';

/** The slice of a faker instance this module uses; its modules are read by name, own properties only. */
interface FakerInstance {
  setDefaultRefDate(date: string): void;
  readonly rawDefinitions: unknown;
}

/** What faker draws its numbers from (faker's `Randomizer`). */
interface Randomizer {
  next(): number;
  seed(seed: number | number[]): void;
}

type FakerClass = new (options: { locale: unknown; randomizer: Randomizer }) => FakerInstance;

const TWO_POW_32 = 4294967296;

/**
 * The numbers faker draws for one answer: sfc32 started from the answer's `fakerSeed`, so faker's
 * values do not depend on other draws of the answer (a `uuid()` added elsewhere changes nothing).
 * Faker's own Mersenne Twister costs ~45 µs to seed, more than a whole answer; this costs nothing.
 */
function fakerStream(seed: number): () => number {
  const next = sfc32(seed, 0x9e3779b9, 0x243f6a88);
  return () => next() / TWO_POW_32;
}

let draw: () => number = Math.random;
/** faker's randomizer: whatever stream the answer being made set last. */
const randomizer: Randomizer = {
  next: () => draw(),
  seed: () => {}, // answers never seed faker themselves: the stream is set per answer
};

/**
 * Faker's dates (`fake.date.past()`, `recent()`, `birthdate()`…) are counted from this fixed
 * moment, not from the clock, so a seed gives the same dates on any day. Use `date(offset)` for
 * times relative to the server's clock.
 */
export const FAKER_REFERENCE_DATE = '2025-01-01T00:00:00.000Z';

let instance: FakerInstance | undefined;
let loading: Promise<void> | undefined;
let seededFor: AnswerRandom | undefined;

/**
 * Loads @faker-js/faker (its English locale only, ~25 ms) the first time it is called; later calls
 * return the same promise. Compiled answers that use `fake.` need it to have resolved before they
 * run; answers that do not never load it.
 */
export function loadFaker(): Promise<void> {
  loading ??= import('@faker-js/faker/locale/en').then(
    ({ faker }) => {
      // Faker's class is not exported by the locale module; this instance's constructor is it.
      const own = new (faker.constructor as unknown as FakerClass)({ locale: faker.rawDefinitions, randomizer });
      own.setDefaultRefDate(FAKER_REFERENCE_DATE);
      instance = installFastFake(own as unknown as FakerInstance & FakeableFaker);
    },
    (error: unknown) => {
      loading = undefined; // let a later call try again
      throw error;
    },
  );
  return loading;
}

/** Whether {@link loadFaker} has finished, so `fake.` calls can run. */
export function isFakerLoaded(): boolean {
  return instance !== undefined;
}

/**
 * A call site `fake.<module>.<method>`: resolves the method on first use (own properties of the
 * instance and its module only) and runs it with faker seeded from the answer's random source.
 * Faker gets a fresh stream (see fakerStream) when it meets a random source other than the last one, i.e. once per request,
 * so its values depend on the seed, the endpoint and n (or `seedBy`) and on the call's place in
 * the answer, never on other requests. A call faker refuses (bad options) gives nothing.
 */
export function fakerCall(module: string, method: string): (args: unknown[], random: AnswerRandom) => unknown {
  let fn: ((args: unknown[]) => unknown) | undefined;
  return (args, random) => {
    if (instance === undefined) throw new Error(`fake.${module}.${method}() ran before loadFaker() resolved`);
    fn ??= resolve(instance, module, method);
    if (seededFor !== random) {
      draw = fakerStream(random.fakerSeed);
      seededFor = random;
    }
    try {
      return toJsonValue(fn(args));
    } catch {
      return undefined;
    }
  };
}

function resolve(faker: FakerInstance, module: string, method: string): (args: unknown[]) => unknown {
  const owner: unknown = ownValue(faker, module);
  const found: unknown = ownValue(owner, method);
  if (typeof found !== 'function') throw new Error(`faker has no method ${module}.${method}`);
  return (args) => (found as (...a: unknown[]) => unknown).apply(owner, args);
}

function ownValue(target: unknown, name: string): unknown {
  if (target === null || typeof target !== 'object' || FORBIDDEN_NAMES.has(name) || !Object.hasOwn(target, name))
    return undefined;
  return (target as Record<string, unknown>)[name];
}
