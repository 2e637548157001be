// Form values typed by the OpenAPI schema of their operation (`openapi.spec`), where the
// collection's fields give no default: `amount=2000` is 2000, `capture=true` is true, nested too.
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, test } from 'vitest';
import { testEngine } from './helpers.js';
import { tempDir } from '../../helpers/cli.js';

const SPEC = {
  openapi: '3.0.3',
  info: { title: 'charges', version: '1' },
  paths: {
    '/v1/charges': {
      post: {
        requestBody: {
          content: {
            'application/x-www-form-urlencoded': {
              schema: { $ref: '#/components/schemas/ChargeParams' },
            },
          },
        },
        responses: { '200': { description: 'made' } },
      },
    },
    '/v1/charges/{charge}': {
      post: {
        requestBody: {
          content: {
            'application/x-www-form-urlencoded': {
              schema: { type: 'object', properties: { amount_refunded: { type: 'integer' } } },
            },
          },
        },
        responses: { '200': { description: 'updated' } },
      },
    },
  },
  components: {
    schemas: {
      ChargeParams: {
        type: 'object',
        properties: {
          amount: { type: 'integer' },
          fee_rate: { type: 'number' },
          capture: { type: 'boolean' },
          shipping: {
            type: 'object',
            properties: { phone: { type: 'string' }, tracking: { anyOf: [{ type: 'integer' }, { type: 'string' }] } },
          },
          items: { type: 'array', items: { type: 'object', properties: { quantity: { type: 'integer' } } } },
        },
      },
    },
  },
};

describe('form values typed by the OpenAPI schema', () => {
  test('create and update read the types the description gives the operation', async () => {
    const dir = await tempDir('mockapi-hints-');
    const spec = join(dir, 'openapi.json');
    await writeFile(spec, JSON.stringify(SPEC));
    const t = await testEngine({
      server: { basePath: '/' },
      openapi: { spec, validate: { requests: 'off' } },
      resources: { charges: { style: 'stripe', path: '/v1/charges', fields: { object: 'charge' } } },
    });
    const made = await t.call(
      'POST',
      '/v1/charges',
      'amount=2000&capture=true&shipping[phone]=0123&shipping[tracking]=42&items[0][quantity]=3&description=x',
    );
    expect(made?.json).toEqual({
      id: made?.json.id,
      object: 'charge',
      amount: 2000,
      capture: true,
      shipping: { phone: '0123', tracking: 42 },
      items: [{ quantity: 3 }],
      description: 'x',
    });
    expect((await t.call('POST', '/v1/charges', 'amount=lots'))?.json.error).toEqual({
      message: 'Invalid integer: lots',
      param: 'amount',
      type: 'invalid_request_error',
    });
    // `number` takes a fraction, `integer` does not
    expect((await t.call('POST', '/v1/charges', 'fee_rate=2.5'))?.json.fee_rate).toBe(2.5);
    expect((await t.call('POST', '/v1/charges', 'amount=2.5'))?.json.error.message).toBe('Invalid integer: 2.5');
    const updated = await t.call('POST', `/v1/charges/${made?.json.id}`, 'amount_refunded=500');
    expect(updated?.json.amount_refunded).toBe(500);
  });
});
