import { describe, expect, it } from 'vitest';
import { formatIssue, parseConfig } from '../../src/config/load.js';

const base = 'apiKey: k\nendpoints: []\nlimits:\n';

describe('limits.store and limits.storeDown (SPEC §12)', () => {
  it.each([
    ['redis://127.0.0.1:6379/0', undefined],
    ['rediss://user:pass@cache.example:6380', undefined],
    ['unix:///run/redis/redis.sock?db=2', 'open'],
    ['REDIS://localhost', 'closed'],
  ])('takes %s (storeDown %s)', async (store, storeDown) => {
    const result = await parseConfig(
      `${base}  store: ${store}\n${storeDown ? `  storeDown: ${storeDown}\n` : ''}`,
      'm.yaml',
    );
    expect(result.ok && result.config.limits).toEqual(storeDown ? { store, storeDown } : { store });
  });

  it.each([
    [
      '  store: http://localhost:6379\n',
      'm.yaml:4:10: limits.store must be a redis://host:port/db, rediss://… or unix:///path/to/socket URL',
    ],
    ['  storeDown: maybe\n', 'm.yaml:4:14: limits.storeDown'],
  ])('refuses %j', async (yaml, message) => {
    const result = await parseConfig(`${base}${yaml}`, 'm.yaml');
    expect(result.ok).toBe(false);
    if (!result.ok) expect(result.issues.map(formatIssue).join('\n')).toContain(message);
  });
});
