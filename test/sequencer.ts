// The order test files start in. With a few workers, the run lasts at least as long as its slowest
// file, from the moment that file starts: the slowest start first, so none of them is left to run
// alone at the end. vitest orders by the last run's durations when it has them (not in a fresh
// clone, as on CI), else by file size; the files named here, measured slowest on two cores, go
// first either way. pack.test.ts waits for the packed checkout docs-commands.test.ts builds
// (test/helpers/packed.ts): it starts once the other slow files have.
import { BaseSequencer, type TestSpecification } from 'vitest/node';

// Longest first, by their durations in a full run on two cores (2026-11-29, seconds, under load):
// docs-commands 647, lifecycle 331, openapi-import 256, verify 249, openapi-corpus 242,
// openapi-real-corpus 228, rotate-key-concurrent 124, upstream-proxy 121, stream-leaks 117,
// store-usage-e2e 107, examples 106, limits-e2e 97.
const SLOW_FIRST = [
  'test/e2e/docs-commands.test.ts',
  'test/e2e/lifecycle.test.ts',
  'test/e2e/openapi-import.test.ts',
  'test/e2e/verify.test.ts',
  'test/e2e/openapi-corpus.test.ts',
  'test/e2e/openapi-real-corpus.test.ts',
  'test/e2e/rotate-key-concurrent.test.ts',
  'test/e2e/upstream-proxy.test.ts',
  'test/e2e/stream-leaks.test.ts',
  'test/e2e/store-usage-e2e.test.ts',
  'test/e2e/examples.test.ts',
  'test/e2e/limits-e2e.test.ts',
  'test/e2e/fleet-faults-e2e.test.ts',
  'test/e2e/fleet-e2e.test.ts',
  'test/e2e/network-faults.test.ts',
  'test/e2e/store-down-e2e.test.ts',
  'test/e2e/shared-limits-e2e.test.ts',
  'test/unit/config-properties.test.ts',
  'test/e2e/pack.test.ts',
];

export default class SlowFirstSequencer extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const sorted = await super.sort(files);
    const rank = (spec: TestSpecification) => {
      const at = SLOW_FIRST.findIndex((name) => spec.moduleId.endsWith(`/${name}`));
      return at === -1 ? SLOW_FIRST.length : at;
    };
    return sorted
      .map((spec, i) => ({ spec, i }))
      .sort((a, b) => rank(a.spec) - rank(b.spec) || a.i - b.i)
      .map(({ spec }) => spec);
  }
}
