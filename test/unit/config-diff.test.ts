import { describe, expect, it } from 'vitest';
import { describeConfigChange } from '../../src/config/diff.js';
import type { Config, EndpointConfig, HttpMethod } from '../../src/config/types.js';

const SECRET = 'mk_secretSECRETsecret0123456789ab';

function endpoint(method: HttpMethod, path: string, extra: Partial<EndpointConfig> = {}): EndpointConfig {
  return { method, path, failRate: 0, delayMs: 0, response: { status: 200, headers: {} }, ...extra };
}

function config(extra: Partial<Config> = {}): Config {
  return {
    file: '/srv/app/mockapi.yaml',
    dir: '/srv/app',
    project: 'shop',
    apiKey: SECRET,
    server: { port: 4010, host: '127.0.0.1', cors: true, maxBodySize: 1048576, journal: 1000 },
    limits: {},
    endpoints: [
      endpoint('GET', '/users/:id', { response: { status: 200, headers: {}, body: { id: 1 } } }),
      endpoint('GET', '/old'),
    ],
    scenarios: {},
    revision: 'a'.repeat(64),
    ...extra,
  };
}

const base = config();

describe('describeConfigChange', () => {
  it.each<[string, Config, string]>([
    ['only formatting changed', config({ revision: 'b'.repeat(64) }), 'reloaded mockapi.yaml: no endpoint changes'],
    [
      'the example from the issue',
      config({
        apiKey: 'mk_other',
        limits: { monthlyQuota: 10 },
        endpoints: [
          endpoint('GET', '/users/:id', { delayMs: 120, response: { status: 200, headers: {}, body: { id: 1 } } }),
          endpoint('POST', '/orders'),
        ],
      }),
      'reloaded mockapi.yaml: +1 endpoint (POST /orders), -1 (GET /old), ~1 changed (GET /users/:id); apiKey changed; limits changed',
    ],
    ['only removals', config({ endpoints: [] }), 'reloaded mockapi.yaml: -2 endpoints (GET /users/:id, GET /old)'],
    [
      'only a body change',
      config({
        endpoints: [
          endpoint('GET', '/users/:id', { response: { status: 200, headers: {}, body: { id: 2 } } }),
          endpoint('GET', '/old'),
        ],
      }),
      'reloaded mockapi.yaml: ~1 endpoint changed (GET /users/:id)',
    ],
    [
      'endpoints reordered',
      config({ endpoints: [...base.endpoints].reverse() }),
      'reloaded mockapi.yaml: no endpoint changes',
    ],
    [
      'many additions are counted, not all named',
      config({ endpoints: [...base.endpoints, ...['/a', '/b', '/c', '/d', '/e'].map((p) => endpoint('PUT', p))] }),
      'reloaded mockapi.yaml: +5 endpoints (PUT /a, PUT /b, PUT /c, +2 more)',
    ],
    [
      'server, seed and project',
      config({ server: { ...base.server, cors: false }, seed: 7, project: 'other' }),
      'reloaded mockapi.yaml: no endpoint changes; server settings changed; seed changed; project changed',
    ],
    ['apiKey only', config({ apiKey: 'mk_new' }), 'reloaded mockapi.yaml: no endpoint changes; apiKey changed'],
  ])('%s', (_name, next, expected) => {
    expect(describeConfigChange(base, next)).toBe(expected);
  });

  it('ignores the order of keys inside an endpoint', () => {
    const a = config({
      endpoints: [endpoint('GET', '/x', { response: { status: 200, headers: { a: '1', b: '2' } } })],
    });
    const b = config({
      endpoints: [endpoint('GET', '/x', { response: { status: 200, headers: { b: '2', a: '1' } } })],
    });
    expect(describeConfigChange(a, b)).toBe('reloaded mockapi.yaml: no endpoint changes');
  });

  it('never prints either key', () => {
    const line = describeConfigChange(base, config({ apiKey: 'mk_theNewOne123' }));
    expect(line).not.toContain(SECRET);
    expect(line).not.toContain('mk_theNewOne123');
  });
});
