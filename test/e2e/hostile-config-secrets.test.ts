// A key or a webhook secret written as an unquoted number (or any other YAML type) is a config
// error that names the field and never shows the value, however YAML read it.
import { describe, expect, test } from 'vitest';
import { runCli, useTempDir, writeConfig } from '../helpers/cli.js';

const dir = useTempDir('mockapi-hostile-config-secrets-');

describe('config errors never echo a secret', () => {
  test('apiKey, keys[].key, sign.secret, upstream.auth.value and a credential header as numbers: named, not shown', async () => {
    const file = await writeConfig(
      dir.path,
      `apiKey: 11112222333344445555
keys:
  - { name: ci, key: 98765432109876543210 }
  - { name: ops, key: 1.2345678901e30 }
upstream:
  url: http://127.0.0.1:9
  auth: { header: Authorization, value: 44445555666677778888 }
  headers: { x-api-key: 77778888999900001111 }
webhooks:
  targets:
    app:
      url: http://127.0.0.1:9/hook
      sign: { scheme: github, secret: 12345678901234567 }
  events:
    ping: { envelope: github }
endpoints: []
`,
    );
    const { code, stdout, stderr } = await runCli(['validate', '-c', file]);
    const out = stdout + stderr;
    expect(code).toBe(1);
    for (const field of [
      'apiKey',
      'keys[0].key',
      'keys[1].key',
      'upstream.auth.value',
      'webhooks.targets.app.sign.secret',
    ])
      expect(out).toContain(field);
    // Neither as written nor as YAML's number (98765432109876543210 reads as 98765432109876540000).
    for (const digits of [
      '1111222233334444',
      '9876543210987654',
      '12345678901',
      '4444555566667777',
      '7777888899990000',
      '1234567890123456',
      '1.2345678901e+30',
    ])
      expect(out).not.toContain(digits);
  });
});
