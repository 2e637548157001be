// The per-request work of resources made cheaper (bench: resources), with the same results: form
// values decoded as decodeURIComponent does, typed without copying what stays text, and matches
// remembered for the config served only.
import { describe, expect, test } from 'vitest';
import { configFromObject } from '../../src/config/load.js';
import { silentLogger } from '../../src/logger.js';
import { ResourceEngine } from '../../src/resources/engine.js';
import { parseForm, typeForm } from '../../src/resources/form.js';
import { MemoryResourceStore } from '../../src/resources/memory-store.js';

/** What form.ts did before its own decoder: decodeURIComponent, `+` as a space, a malformed text kept as sent. */
function reference(text: string): string {
  const plus = text.includes('+');
  if (!plus && !text.includes('%')) return text;
  try {
    return decodeURIComponent(plus ? text.replace(/\+/g, ' ') : text);
  } catch {
    return text;
  }
}

describe('form values', () => {
  test('escapes read as decodeURIComponent reads them: ASCII, UTF-8, plus signs, malformed ones kept', () => {
    expect(
      parseForm(
        'email=jenny.rosen%40example.com&name=Jenny%20Rosen+Jr&c=%E2%82%AC&d=%zz&e=100%&f=%7e%7E&g=caf%C3%A9',
        true,
      ),
    ).toEqual({
      email: 'jenny.rosen@example.com',
      name: 'Jenny Rosen Jr',
      c: '€',
      d: '%zz',
      e: '100%',
      f: '~~',
      g: 'café',
    });
    expect(parseForm('metadata%5Bplan%5D=pro&x=%4&y=%', true)).toEqual({ metadata: { plan: 'pro' }, x: '%4', y: '%' });
  });

  test('any mix of escapes, digits and plus signs decodes as decodeURIComponent does (seeded draws)', () => {
    const parts = ['%', '4', '1', 'a', 'F', '8', '0', '+', 'x', '%2', '%C3', '%A9', '%7f', '%80', '%e2%82%ac', ' '];
    let state = 12345;
    const draw = (n: number): number => {
      state = (Math.imul(state, 1103515245) + 12345) >>> 0;
      return state % n;
    };
    const differ: string[] = [];
    for (let n = 0; n < 20_000; n++) {
      let text = '';
      for (let i = 0, length = 1 + draw(8); i < length; i++) text += parts[draw(parts.length)];
      if (parseForm(`k=${text}`, false).k !== reference(text)) differ.push(text);
    }
    expect(differ).toEqual([]);
  });

  test('names decode as values do, and a `+` or an escape in one part does not decode the other (seeded draws)', () => {
    const parts = ['%', '4', '1', 'a', '8', '+', 'x', '%2', '%C3', '%A9', '%7f', '%e2%82%ac', '=', ' '];
    let state = 54321;
    const draw = (n: number): number => {
      state = (Math.imul(state, 1103515245) + 12345) >>> 0;
      return state % n;
    };
    const differ: string[] = [];
    for (let n = 0; n < 20_000; n++) {
      let name = '';
      for (let i = 0, length = 1 + draw(6); i < length; i++) name += parts[draw(parts.length - 2)];
      let value = '';
      for (let i = 0, length = draw(6); i < length; i++) value += parts[draw(parts.length)];
      const key = reference(name);
      if (key.includes('[') || ['__proto__', 'constructor', 'prototype'].includes(key)) continue;
      const read = parseForm(`a=1&${name}=${value}&b=2`, true);
      const expected = reference(value);
      if (read[key] !== (expected === '' ? null : expected) || read.a !== '1' || read.b !== '2')
        differ.push(`${name}=${value}`);
    }
    expect(differ).toEqual([]);
    expect(parseForm('m%5Bplan%5D=pro&n[a%5D=1&o%5Bx]=2', true)).toEqual({
      m: { plan: 'pro' },
      n: { a: '1' },
      o: { x: '2' },
    });
  });
});

describe('typeForm', () => {
  test('types what the hint types, leaves the fields read as they were, and copies only what changed', () => {
    const fields = parseForm('amount=2000&paid=true&name=Ada&metadata[plan]=pro&items[0][qty]=2&items[1][qty]=3', true);
    const before = JSON.stringify(fields);
    const hint = { amount: 0, paid: false, name: null, metadata: {}, items: [{ qty: 1 }] };
    const typed = typeForm(fields, hint, '') as Record<string, unknown>;
    expect(typed).toEqual({
      amount: 2000,
      paid: true,
      name: 'Ada',
      metadata: { plan: 'pro' },
      items: [{ qty: 2 }, { qty: 3 }],
    });
    expect(JSON.stringify(fields)).toBe(before);
    expect(typed).not.toBe(fields);
    expect(typed.metadata).toBe(fields.metadata); // text only: given back as it is
    const text = parseForm('email=a%40b.c&metadata[plan]=pro', true);
    expect(typeForm(text, { email: null, metadata: {}, balance: 0 }, '')).toBe(text);
  });

  test('a value that is not of its type is still refused, naming the parameter', () => {
    expect(() => typeForm(parseForm('items[0][qty]=two', true), { items: [{ qty: 1 }] }, '')).toThrow(
      /Invalid integer: two/,
    );
  });
});

async function engineOf(path: string): Promise<{ engine: ResourceEngine; follow(path: string): Promise<void> }> {
  const engine = new ResourceEngine({
    store: new MemoryResourceStore(),
    clock: () => Date.parse('2026-01-01T00:00:00Z'),
    seed: () => 7,
    logger: silentLogger,
  });
  const follow = async (at: string): Promise<void> => {
    const loaded = configFromObject(
      {
        apiKey: 'mk_resourcesRequestPath000000000001',
        resources: { customers: { style: 'stripe', path: at, fields: { object: 'customer' } } },
      },
      process.cwd(),
    );
    if (!loaded.ok) throw new Error(loaded.issues.map((i) => i.message).join('\n'));
    await engine.follow(loaded.config);
  };
  await follow(path);
  return { engine, follow };
}

describe('matches', () => {
  test('a path matched before a reload is matched against the collections the reload brought', async () => {
    const { engine, follow } = await engineOf('/v1/customers');
    const first = engine.match('GET', '/v1/customers/cus_1');
    expect(first).toMatchObject({ operation: 'retrieve', label: 'customers.retrieve', route: 'GET /v1/customers/:id' });
    expect(engine.match('GET', '/v1/customers/cus_1')).toBe(first);
    expect(engine.match('POST', '/v1/customers')).toMatchObject({ operation: 'create', readsBody: true });
    expect(engine.match('GET', '/v2/customers/cus_1')).toBeUndefined();
    await follow('/v2/customers');
    expect(engine.match('GET', '/v1/customers/cus_1')).toBeUndefined();
    expect(engine.match('GET', '/v2/customers/cus_1')).toMatchObject({ route: 'GET /v2/customers/:id' });
  });

  test('a match shared by requests cannot be changed by one of them', async () => {
    const { engine } = await engineOf('/v1/customers');
    const match = engine.match('GET', '/v1/customers/cus_1')!;
    expect(Object.isFrozen(match) && Object.isFrozen(match.path) && Object.isFrozen(match.path.params)).toBe(true);
    expect(match.path.id).toBe('cus_1');
  });
});

describe('resources.<name> in a collection’s fields', () => {
  test('a create reads the objects of another collection as they are now, each write seen by the next create', async () => {
    const loaded = configFromObject(
      {
        apiKey: 'mk_resourcesRequestPath000000000001',
        resources: {
          customers: { style: 'stripe', path: '/v1/customers', fields: { object: 'customer' } },
          orders: {
            style: 'stripe',
            path: '/v1/orders',
            fields: { object: 'order', customers: '${resources.customers}' },
          },
        },
      },
      process.cwd(),
    );
    if (!loaded.ok) throw new Error(loaded.issues.map((i) => i.message).join('\n'));
    const engine = new ResourceEngine({
      store: new MemoryResourceStore(),
      clock: () => Date.parse('2026-01-01T00:00:00Z'),
      seed: () => 7,
      logger: silentLogger,
    });
    await engine.follow(loaded.config);
    const post = async (path: string): Promise<Record<string, unknown>> => {
      const answer = await engine.handle(engine.match('POST', path)!, {
        method: 'POST',
        path,
        query: '',
        headers: {},
        body: undefined,
        scope: '',
        origin: 'http://127.0.0.1:4010',
        basePath: '',
      });
      return JSON.parse(answer.body) as Record<string, unknown>;
    };
    expect((await post('/v1/orders')).customers).toEqual([]);
    const customer = await post('/v1/customers');
    expect((await post('/v1/orders')).customers).toEqual([customer]);
  });
});
