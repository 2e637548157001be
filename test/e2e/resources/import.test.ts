// `mockapi import --resources`: the operations of a collection become a resource (style, path, id
// form and defaults read from the description); the rest stay endpoints; a second import keeps it.
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, test } from 'vitest';
import { parseConfig } from '../../../src/config/load.js';
import { importDescription } from '../../../src/openapi/import.js';
import { tempDir } from '../../helpers/cli.js';

const SPEC = {
  openapi: '3.0.3',
  info: { title: 'payments', version: '1' },
  servers: [{ url: 'https://api.example.com/v1' }],
  paths: {
    '/customers': {
      get: {
        responses: {
          '200': {
            description: 'list',
            content: {
              'application/json': { example: { object: 'list', url: '/v1/customers', has_more: false, data: [] } },
            },
          },
        },
      },
      post: {
        responses: {
          '200': {
            description: 'made',
            content: { 'application/json': { example: { id: 'cus_NffrFeUfNV2Hib', object: 'customer' } } },
          },
        },
      },
    },
    '/customers/{customer}': {
      get: {
        responses: {
          '200': {
            description: 'one',
            content: {
              'application/json': {
                example: {
                  id: 'cus_NffrFeUfNV2Hib',
                  object: 'customer',
                  email: null,
                  balance: 0,
                  metadata: {},
                  note: 'costs ${5}',
                },
              },
            },
          },
        },
      },
      post: { responses: { '200': { description: 'updated' } } },
      delete: { responses: { '200': { description: 'deleted' } } },
    },
    '/customers/{customer}/archive': { post: { responses: { '200': { description: 'archived' } } } },
    '/issues': {
      get: {
        responses: {
          '200': { description: 'list', content: { 'application/json': { example: [{ id: 1, title: 'x' }] } } },
        },
      },
    },
    '/issues/{number}': {
      get: {
        responses: {
          '200': {
            description: 'one',
            content: { 'application/json': { example: { id: 1, title: 'Found a bug', state: 'open' } } },
          },
        },
      },
      patch: { responses: { '200': { description: 'updated' } } },
    },
    '/health': {
      get: { responses: { '200': { description: 'ok', content: { 'application/json': { example: { ok: true } } } } } },
    },
  },
};

describe('import --resources', () => {
  test('collections become resources, the rest endpoints; the config is valid; a second import keeps the resources', async () => {
    const dir = await tempDir('mockapi-import-res-');
    const spec = join(dir, 'openapi.json');
    const config = join(dir, 'mockapi.yaml');
    await writeFile(spec, JSON.stringify(SPEC));
    const outcome = await importDescription({
      spec,
      config,
      newApiKey: () => 'mk_importResources00000000000000001',
      resources: true,
    });
    expect(outcome.code).toBe(0);
    expect(outcome.lines.join('\n')).toContain(
      '2 resources added under resources: customers (stripe, /v1/customers: 6 operations), issues (github, /v1/issues: 3 operations)',
    );
    const text = await readFile(config, 'utf8');
    const loaded = await parseConfig(text, config);
    expect(loaded.ok).toBe(true);
    if (!loaded.ok) return;
    expect(loaded.config.endpoints.map((e) => `${e.method} ${e.path}`)).toEqual(['GET /v1/health']);
    const [customers, issues] = loaded.config.resources?.collections ?? [];
    expect(customers).toMatchObject({
      name: 'customers',
      style: 'stripe',
      path: '/v1/customers',
      id: 'cus_${randomId(14)}',
      fields: { object: 'customer', email: null, balance: 0, metadata: {}, note: 'costs $${5}' },
    });
    expect(customers?.actions.map((a) => a.name)).toEqual(['archive']);
    expect(issues).toMatchObject({
      name: 'issues',
      style: 'github',
      path: '/v1/issues',
      fields: { title: 'Found a bug', state: 'open' },
    });
    expect(issues?.id).toBeUndefined();

    const again = await importDescription({ spec, config, newApiKey: () => 'unused', resources: true });
    expect(again.code).toBe(0);
    expect(await readFile(config, 'utf8')).toBe(text);
  });

  test('into a config that has resources of its own: they stay, the new ones are added after them', async () => {
    const dir = await tempDir('mockapi-import-res-');
    const spec = join(dir, 'openapi.json');
    const config = join(dir, 'mockapi.yaml');
    await writeFile(spec, JSON.stringify(SPEC));
    const mine =
      'apiKey: mk_importResources00000000000000002\nresources:\n  todos:   # mine\n    style: rest\n    path: /todos\nlimits:\n  monthlyQuota: 10\n';
    await writeFile(config, mine);
    expect((await importDescription({ spec, config, newApiKey: () => 'unused', resources: true })).code).toBe(0);
    const text = await readFile(config, 'utf8');
    expect(
      text.startsWith(
        'apiKey: mk_importResources00000000000000002\nresources:\n  todos:   # mine\n    style: rest\n    path: /todos\n  customers:\n',
      ),
    ).toBe(true);
    const loaded = await parseConfig(text, config);
    expect(loaded.ok && loaded.config.resources?.collections.map((c) => c.name)).toEqual([
      'todos',
      'customers',
      'issues',
    ]);
    expect(loaded.ok && loaded.config.limits.monthlyQuota).toBe(10);
  });
});
