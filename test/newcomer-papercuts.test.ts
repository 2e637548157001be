// Papercuts a newcomer met (issue 45), each pinned: a rotated key keeps the service's prefix, a
// config error names the path parameter it cannot find, `usage` reads the running server's live
// count, and `record` says what it does.
import { describe, expect, test } from 'vitest';
import { generateApiKey, keyPrefixOf } from '../src/config/keys.js';

describe('a rotated key keeps its prefix up to the last `_`', () => {
  test.each([
    ['sk_test_ci_4eC39HqLyjWDarjtT1zdp7dc', 'sk_test_ci_'],
    ['mk_9WbDq2vG0yq7Jc4TnR1sXe8ZkP3fLmA6', 'mk_'],
    ['ghp_abc', 'ghp_'],
    ['plainkey', 'mk_'],
    ['_leading', 'mk_'],
    [`${'x'.repeat(60)}_tail`, 'mk_'],
  ])('%s → %s', (key, prefix) => {
    expect(keyPrefixOf(key)).toBe(prefix);
  });

  test('the new key is the prefix and 32 base62 characters', () => {
    expect(generateApiKey('sk_test_ci_')).toMatch(/^sk_test_ci_[0-9A-Za-z]{32}$/);
    expect(generateApiKey()).toMatch(/^mk_[0-9A-Za-z]{32}$/);
  });
});
