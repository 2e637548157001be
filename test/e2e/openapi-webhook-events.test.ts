// OpenAPI `callbacks` and 3.1 `webhooks` as webhook event templates (src/openapi/webhook-events.ts),
// merged into the config as imported endpoints are (src/openapi/merge-events.ts), and end to end
// through `mockapi import` into a config that has hand-written webhooks.
import { describe, expect, test } from 'vitest';
import openapiSampler from 'openapi-sampler';
import { importedEvents } from '../../src/openapi/webhook-events.js';
import { eventDrift, mergeEventTemplates } from '../../src/openapi/merge-events.js';
import type { Sampler } from '../../src/openapi/sample.js';
import { createExpander } from '../../src/openapi/schema-expand.js';
import type { JsonObject } from '../../src/description/json-pointer.js';
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { parse } from 'yaml';
import { runCli, useTempDir } from '../helpers/cli.js';
import { runImport } from '../helpers/openapi.js';

const sampler = (openapiSampler as unknown as { sample: Sampler }).sample;

describe('importedEvents', () => {
  test('3.1 webhooks and operation callbacks become templates with sampled data', () => {
    const doc = {
      openapi: '3.1.0',
      info: { title: 't', version: '1' },
      webhooks: {
        'pet.created': {
          post: { requestBody: { content: { 'application/json': { schema: { $ref: '#/components/schemas/Pet' } } } } },
        },
      },
      paths: {
        '/subscriptions': {
          post: {
            callbacks: {
              'order.paid': {
                '{$request.body#/callbackUrl}': {
                  post: { requestBody: { content: { 'application/json': { example: { order: 'o_1', paid: true } } } } },
                },
              },
            },
          },
        },
      },
      components: {
        schemas: {
          Pet: {
            type: 'object',
            required: ['id', 'name'],
            properties: { id: { type: 'integer' }, name: { type: 'string', example: 'Rex' } },
          },
        },
      },
    } as unknown as JsonObject;
    expect(importedEvents(doc, sampler, createExpander(doc))).toEqual([
      {
        name: 'pet.created',
        from: 'webhooks.pet.created',
        template: { envelope: 'none', data: { id: 0, name: 'Rex' } },
      },
      {
        name: 'order.paid',
        from: 'POST /subscriptions callbacks.order.paid',
        template: { envelope: 'none', data: { order: 'o_1', paid: true } },
      },
    ]);
  });

  test('a description without either gives none', () => {
    expect(importedEvents({ openapi: '3.0.3', paths: {} } as unknown as JsonObject, sampler, (s) => s)).toEqual([]);
  });
});

describe('mergeEventTemplates', () => {
  const pet = {
    name: 'pet.created',
    from: 'webhooks.pet.created',
    template: { envelope: 'none' as const, data: { id: 0 } },
  };
  const paid = {
    name: 'order.paid',
    from: 'POST /orders callbacks.order.paid',
    template: { envelope: 'none' as const, data: { paid: true } },
  };
  const imported = (data: string, envelope = 'none') =>
    `    "pet.created":\n      openapi: "webhooks.pet.created"\n      openapiSpec: "spec.yaml"\n      envelope: "${envelope}"\n      data: ${data}\n`;

  test('a config without webhooks: gets a block at its end; nothing else changes', () => {
    const result = mergeEventTemplates('apiKey: k\nendpoints: []\n', [pet], 'spec.yaml');
    expect(result.text).toBe(`apiKey: k\nendpoints: []\nwebhooks:\n  events:\n${imported('{"id":0}')}`);
    expect(result.lines).toEqual([
      '  1 webhook event template added under webhooks.events (pet.created); add webhooks.targets and a send to use them',
    ]);
  });

  test('hand-written webhooks: new events are added after them, byte for byte around them', () => {
    const text =
      'apiKey: k\nwebhooks:\n  targets:\n    app: { url: "http://127.0.0.1:3000/h", sign: { scheme: none } }\n  events:\n    # my own\n    pet.created: { envelope: github, data: { mine: true } }\n    ping:\n      data: { zen: hi }\nendpoints: []\n';
    const result = mergeEventTemplates(text, [pet, paid], 'spec.yaml');
    expect(result.text).toBe(
      text.replace(
        'endpoints: []',
        `    "order.paid":\n      openapi: "POST /orders callbacks.order.paid"\n      openapiSpec: "spec.yaml"\n      envelope: "none"\n      data: {"paid":true}\nendpoints: []`,
      ),
    );
    expect(result.lines).toEqual([
      '  1 webhook event template added under webhooks.events (order.paid); add webhooks.targets and a send to use them',
      '  webhook event kept as written (yours, not imported from this description): pet.created',
    ]);
  });

  test('an event imported before is updated in place (its envelope kept), and left byte for byte when unchanged', () => {
    const text = `apiKey: k\nwebhooks:\n  events:\n    ping: { data: {} }\n${imported('{"id":7}', 'stripe')}    last: { data: {} }\n`;
    const result = mergeEventTemplates(text, [pet], 'spec.yaml');
    expect(result.text).toBe(
      `apiKey: k\nwebhooks:\n  events:\n    ping: { data: {} }\n${imported('{"id":0}', 'stripe')}    last: { data: {} }\n`,
    );
    expect(result.lines).toEqual(['  1 imported webhook event template updated (pet.created)']);
    expect(mergeEventTemplates(result.text, [pet], 'spec.yaml')).toEqual({ text: result.text, lines: [] });
    // Imported from another description: not this import's to change.
    const other = text.replace('"spec.yaml"', '"other.yaml"');
    expect(mergeEventTemplates(other, [pet], 'spec.yaml').text).toBe(other);
  });

  test('webhooks: without events, events: empty, CRLF and a file without a final newline', () => {
    expect(
      mergeEventTemplates('webhooks:\n  targets:\n    app: { url: "http://x/h" }\nendpoints: []\n', [paid], 's.yaml')
        .text,
    ).toBe(
      'webhooks:\n  targets:\n    app: { url: "http://x/h" }\n  events:\n    "order.paid":\n      openapi: "POST /orders callbacks.order.paid"\n      openapiSpec: "s.yaml"\n      envelope: "none"\n      data: {"paid":true}\nendpoints: []\n',
    );
    expect(mergeEventTemplates('webhooks:\r\n  events: {}\r\napiKey: k\r\n', [paid], 's.yaml').text).toBe(
      'webhooks:\r\n  events:\r\n    "order.paid":\r\n      openapi: "POST /orders callbacks.order.paid"\r\n      openapiSpec: "s.yaml"\r\n      envelope: "none"\r\n      data: {"paid":true}\r\napiKey: k\r\n',
    );
    expect(mergeEventTemplates('apiKey: k\nwebhooks:', [paid], 's.yaml').text).toBe(
      'apiKey: k\nwebhooks:\n  events:\n    "order.paid":\n      openapi: "POST /orders callbacks.order.paid"\n      openapiSpec: "s.yaml"\n      envelope: "none"\n      data: {"paid":true}\n',
    );
  });

  test('eventDrift: events written by hand or imported from another description never drift', () => {
    const text = `apiKey: k\nwebhooks:\n  events:\n${imported('{"id":0}')}    ping: { data: {} }\n    other: { openapi: x, openapiSpec: other.yaml, data: {} }\n    gone: { openapi: webhooks.gone, openapiSpec: ./spec.yaml, data: {} }\n`;
    expect(eventDrift(text, [pet, paid], 'spec.yaml')).toEqual({
      missing: ['order.paid'],
      stale: ['gone'],
      changed: [],
    });
    expect(eventDrift(text, [{ ...pet, template: { envelope: 'none', data: { id: 1 } } }], 'spec.yaml')).toEqual({
      missing: [],
      stale: ['gone'],
      changed: ['pet.created'],
    });
    expect(eventDrift('apiKey: k\n', [pet], 'spec.yaml')).toEqual({ missing: ['pet.created'], stale: [], changed: [] });
  });

  test('a flow-style webhooks.events with content is left alone, and said so', () => {
    const text = 'apiKey: k\nwebhooks: { events: { ping: {} } }\n';
    expect(mergeEventTemplates(text, [paid], 's.yaml')).toEqual({
      text,
      lines: [
        '  webhook events in the description not imported: webhooks: is not a block mapping (write it as one to import order.paid)',
      ],
    });
  });
});

describe('mockapi import into a config with hand-written webhooks', () => {
  const dir = useTempDir('mockapi-import-webhooks-');
  const spec = (data: unknown) =>
    JSON.stringify({
      openapi: '3.1.0',
      info: { title: 'shop', version: '1' },
      paths: {
        '/orders': {
          post: {
            responses: { '201': { description: 'ok', content: { 'application/json': { example: { id: 'o_1' } } } } },
            callbacks: {
              'order.paid': {
                '{$request.body#/hook}': {
                  post: { requestBody: { content: { 'application/json': { example: data } } } },
                },
              },
            },
          },
        },
      },
      webhooks: {
        'pet.created': {
          post: { requestBody: { content: { 'application/json': { example: { id: 1, name: 'Rex' } } } } },
        },
      },
    });

  test('adds the missing events, updates the imported ones on the next import, never touches the hand-written one', async () => {
    const config = join(dir.path, 'mockapi.yaml');
    const mine = `apiKey: mk_importWebhooks00000000000000001
# hand-written
webhooks:
  targets:
    app:
      url: http://127.0.0.1:3000/hooks
      sign: { scheme: github, secret: my-secret }
  events:
    pet.created:   # mine: the description's must not replace it
      envelope: github
      data: { id: "\${uuid()}", name: Mine }
endpoints:
  - method: GET
    path: /health
    response: { body: { ok: true } }
`;
    await writeFile(config, mine);
    await writeFile(join(dir.path, 'shop.json'), spec({ order: 'o_1', paid: true }));
    const first = await runImport('shop.json', 'mockapi.yaml', [], dir.path);
    expect(first.code, first.stderr).toBe(0);
    expect(first.stderr).toContain('1 webhook event template added under webhooks.events (order.paid)');
    expect(first.stderr).toContain(
      'webhook event kept as written (yours, not imported from this description): pet.created',
    );
    const once = await readFile(config, 'utf8');
    expect(once.startsWith(mine.slice(0, mine.indexOf('endpoints:')))).toBe(true);
    const events = (parse(once) as { webhooks: { events: Record<string, unknown> } }).webhooks.events;
    expect(events['order.paid']).toEqual({
      openapi: 'POST /orders callbacks.order.paid',
      openapiSpec: 'shop.json',
      envelope: 'none',
      data: { order: 'o_1', paid: true },
    });
    expect((await runCli(['validate', '-c', config])).code).toBe(0);

    // The description changes: the imported template follows (its envelope, chosen by hand, stays); the hand-written one does not.
    await writeFile(config, once.replace('envelope: "none"', 'envelope: "stripe"'));
    await writeFile(join(dir.path, 'shop.json'), spec({ order: 'o_2', paid: false }));
    const second = await runImport('shop.json', 'mockapi.yaml', [], dir.path);
    expect(second.code, second.stderr).toBe(0);
    expect(second.stderr).toContain('1 imported webhook event template updated (order.paid)');
    const twice = await readFile(config, 'utf8');
    expect((parse(twice) as { webhooks: { events: Record<string, unknown> } }).webhooks.events).toEqual({
      'pet.created': { envelope: 'github', data: { id: '${uuid()}', name: 'Mine' } },
      'order.paid': {
        openapi: 'POST /orders callbacks.order.paid',
        openapiSpec: 'shop.json',
        envelope: 'stripe',
        data: { order: 'o_2', paid: false },
      },
    });
    expect(twice.startsWith(mine.slice(0, mine.indexOf('endpoints:')))).toBe(true);
    const third = await runImport('shop.json', 'mockapi.yaml', [], dir.path);
    expect(third.stderr).toContain('is up to date; nothing was written');
  });

  test('--check reports the event templates an import would add, update or leave stale, and changes nothing', async () => {
    const config = join(dir.path, 'check.yaml');
    await writeFile(join(dir.path, 'check.json'), spec({ order: 'o_1', paid: true }));
    await writeFile(config, 'apiKey: mk_importWebhooksCheck000000000001\nendpoints: []\n');
    await runImport('check.json', 'check.yaml', [], dir.path);
    const check = () => runImport('check.json', 'check.yaml', ['--check'], dir.path);
    const inSync = await check();
    expect(inSync.code, inSync.stderr + inSync.stdout).toBe(0);
    expect(inSync.stdout + inSync.stderr).toContain(
      'check.yaml is in sync with check.json (1 operation, 2 webhook events)',
    );

    // The description sends other data: listed as changed (an import updates it), still in sync.
    await writeFile(join(dir.path, 'check.json'), spec({ order: 'o_2', paid: false }));
    const changed = await check();
    expect(changed.code).toBe(0);
    expect(changed.stdout + changed.stderr).toContain(
      '  changed webhook event order.paid: the description now sends other data (an import updates it)',
    );

    // An event the config lacks is missing; one the description dropped is stale: out of sync, exit 1.
    const before = await readFile(config, 'utf8');
    const dropped = JSON.parse(spec({ order: 'o_1', paid: true })) as {
      webhooks?: unknown;
      paths: Record<string, Record<string, Record<string, unknown>>>;
    };
    delete dropped.webhooks;
    dropped.paths['/orders']!['post']!['callbacks'] = {
      'order.refunded': {
        '{$request.body#/hook}': {
          post: { requestBody: { content: { 'application/json': { example: { order: 'o_1' } } } } },
        },
      },
    };
    await writeFile(join(dir.path, 'check.json'), JSON.stringify(dropped));
    const out = await check();
    expect(out.code).toBe(1);
    const text = out.stdout + out.stderr;
    expect(text).toContain('check.yaml is out of sync with check.json: 1 missing, 2 stale;');
    expect(text).toContain('  missing webhook event order.refunded: in check.json, not in check.yaml');
    expect(text).toContain('  stale webhook event order.paid: imported into check.yaml, no longer in check.json');
    expect(text).toContain('  stale webhook event pet.created: imported into check.yaml, no longer in check.json');
    expect(await readFile(config, 'utf8')).toBe(before);
  });
});
