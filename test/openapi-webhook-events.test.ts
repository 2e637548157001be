// OpenAPI `callbacks` and 3.1 `webhooks` as webhook event templates (src/openapi/webhook-events.ts).
import { describe, expect, test } from 'vitest';
import openapiSampler from 'openapi-sampler';
import { appendEventTemplates, importedEvents } from '../src/openapi/webhook-events.js';
import { createExpander, type Sampler } from '../src/openapi/sample.js';
import type { JsonObject } from '../src/openapi/json-pointer.js';

const sampler = (openapiSampler as unknown as { sample: Sampler }).sample;

describe('importedEvents', () => {
  test('3.1 webhooks and operation callbacks become templates with sampled data', () => {
    const doc = {
      openapi: '3.1.0',
      info: { title: 't', version: '1' },
      webhooks: {
        'pet.created': { post: { requestBody: { content: { 'application/json': { schema: { $ref: '#/components/schemas/Pet' } } } } } },
      },
      paths: {
        '/subscriptions': {
          post: {
            callbacks: {
              'order.paid': { '{$request.body#/callbackUrl}': { post: { requestBody: { content: { 'application/json': { example: { order: 'o_1', paid: true } } } } } } },
            },
          },
        },
      },
      components: { schemas: { Pet: { type: 'object', required: ['id', 'name'], properties: { id: { type: 'integer' }, name: { type: 'string', example: 'Rex' } } } } },
    } as unknown as JsonObject;
    expect(importedEvents(doc, sampler, createExpander(doc))).toEqual([
      { name: 'pet.created', from: 'webhooks.pet.created', template: { envelope: 'none', data: { id: 0, name: 'Rex' } } },
      { name: 'order.paid', from: 'POST /subscriptions callbacks.order.paid', template: { envelope: 'none', data: { order: 'o_1', paid: true } } },
    ]);
  });

  test('a description without either gives none', () => {
    expect(importedEvents({ openapi: '3.0.3', paths: {} } as unknown as JsonObject, sampler, (s) => s)).toEqual([]);
  });
});

describe('appendEventTemplates', () => {
  const event = { name: 'pet.created', from: 'webhooks.pet.created', template: { envelope: 'none' as const, data: { id: 0 } } };
  test('a config without webhooks: gets a block at its end; nothing else changes', () => {
    const text = 'apiKey: k\nendpoints: []\n';
    const result = appendEventTemplates(text, [event]);
    expect(result.text).toBe('apiKey: k\nendpoints: []\nwebhooks:\n  events:\n    "pet.created":\n      envelope: none\n      data: {"id":0}\n');
    expect(result.lines).toEqual(['  1 webhook event template added under webhooks.events (pet.created); add webhooks.targets and a send to use them']);
  });
  test('a config that has the event already is left as is, and one with webhooks: is told what is missing', () => {
    const has = 'apiKey: k\nwebhooks:\n  events:\n    pet.created: { data: {} }\n';
    expect(appendEventTemplates(has, [event])).toEqual({ text: has, lines: [] });
    const other = 'apiKey: k\nwebhooks:\n  events: {}\n';
    expect(appendEventTemplates(other, [event]).text).toBe(other);
    expect(appendEventTemplates(other, [event]).lines).toEqual(['  webhook events in the description but not under webhooks.events: pet.created (the config has webhooks: already; add them by hand)']);
  });
});
