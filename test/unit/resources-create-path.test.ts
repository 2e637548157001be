// A create made cheaper (bench/resources-cpu.js) with the same bytes: the default id drawn without
// a context (firstAnswerDraws), the object made from a copy of `{ id, ...defaults }`, form names
// kept as property keys. Each is checked against the way it was made before.
import { describe, expect, test } from 'vitest';
import fc from 'fast-check';
import { configFromObject } from '../../src/config/load.js';
import { randomBase62 } from '../../src/expression/functions.js';
import { silentLogger } from '../../src/logger.js';
import { compileResources } from '../../src/resources/compile.js';
import { ResourceContext } from '../../src/resources/context.js';
import { ResourceEngine } from '../../src/resources/engine.js';
import { parseForm, typeForm } from '../../src/resources/form.js';
import { MemoryResourceStore } from '../../src/resources/memory-store.js';
import { mergeFields } from '../../src/resources/merge.js';
import { objectText } from '../../src/resources/create-operation.js';
import { createAnswerRandom, firstAnswerDraws } from '../../src/seeded.js';

const API_KEY = 'mk_resourcesCreatePath00000000000001';

function configOf(resources: Record<string, unknown>) {
  const loaded = configFromObject({ apiKey: API_KEY, resources }, process.cwd());
  if (!loaded.ok) throw new Error(loaded.issues.map((i) => i.message).join('\n'));
  return loaded.config;
}

/** A context as a create made one for its n-th object, before `plain`. */
function contextOf(seed: number, randomKey: string, n: number): ResourceContext {
  return new ResourceContext({
    params: {},
    query: '',
    headers: {},
    body: {},
    n,
    now: 0,
    state: {},
    seed,
    randomKey,
  });
}

describe('firstAnswerDraws', () => {
  test('the first draws of createAnswerRandom, for any seed, key, number and count', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: -(2 ** 40), max: 2 ** 40 }),
        fc.string(),
        fc.nat(),
        fc.integer({ min: 0, max: 40 }),
        (seed, key, n, count) => {
          const random = createAnswerRandom(seed, key, n);
          const out = new Uint32Array(count);
          firstAnswerDraws(seed, key, n, out);
          return [...out].every((draw) => draw === random.nextUint32());
        },
      ),
      { numRuns: 300 },
    );
  });
});

describe('a default id without a context', () => {
  test('the id makeId gives from a context, for any seed and number', () => {
    const [customers] = compileResources(
      configOf({ customers: { style: 'stripe', path: '/v1/customers', fields: { object: 'customer' } } }).resources,
      [],
    );
    const plain = customers!.plain!;
    expect(plain).toBeDefined();
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 2 ** 31 }), fc.integer({ min: 1, max: 2 ** 40 }), (seed, n) => {
        const ctx = contextOf(seed, customers!.randomKey, n);
        const id = plain.id(seed, n);
        return (
          id === customers!.makeId(ctx, n) &&
          id === `cus_${randomBase62(contextOf(seed, customers!.randomKey, n).random, 14)}`
        );
      }),
      { numRuns: 300 },
    );
  });

  test('only where neither the id nor the fields read the request', () => {
    const compiled = compileResources(
      configOf({
        plain: { style: 'openai', path: '/v1/plain', fields: { object: 'plain' } },
        byExpression: { style: 'stripe', path: '/v1/by', id: 'by_${request.n}', fields: {} },
        github: { style: 'github', path: '/repos/o/r/issues', fields: {} },
        drawn: { style: 'stripe', path: '/v1/drawn', fields: { code: '${randomId(6)}' } },
      }).resources,
      [],
    );
    expect(compiled.map((c) => [c.name, c.plain !== undefined])).toEqual([
      ['plain', true],
      ['byExpression', false],
      ['github', false],
      ['drawn', false],
    ]);
  });
});

/** The text a create wrote before: the defaults merged with the typed fields, the id first (objectText). */
function reference(id: string, defaults: Record<string, unknown>, form: string): string {
  const typed = typeForm(parseForm(form, true), defaults, '') as Record<string, unknown>;
  const fields = { ...typed };
  delete fields.id;
  const merged = mergeFields(defaults, fields);
  delete merged.id;
  return objectText(id, merged);
}

describe('a created object', () => {
  const cases: Array<[string, Record<string, unknown>, string]> = [
    [
      'the usual',
      { object: 'customer', created: 1, email: null, name: null, balance: 0, livemode: false, metadata: {} },
      'email=a%40b.c&name=Ada+L&metadata[plan]=pro&balance=12',
    ],
    [
      'a new field, a null, a cleared mapping',
      { object: 'o', metadata: { a: '1' }, note: 'x' },
      'extra=1&note=&metadata=',
    ],
    ['defaults named like array indexes', { '2': 'two', object: 'o', '0': 'zero' }, 'a=1&1=one'],
    ['fields named like array indexes', { object: 'o' }, '7=seven&b=2'],
    ['an id sent', { object: 'o' }, 'id=mine&b=2'],
    ['nested lists', { object: 'o', items: [{ qty: 1 }] }, 'items[0][qty]=2&items[1][qty]=3&tags[]=a&tags[]=b'],
  ];
  test.each(cases)('%s: the bytes it had', async (_name, fields, form) => {
    const engine = new ResourceEngine({
      store: new MemoryResourceStore(),
      clock: () => Date.parse('2026-01-01T00:00:00Z'),
      seed: () => 7,
      logger: silentLogger,
    });
    await engine.follow(configOf({ things: { style: 'stripe', path: '/v1/things', fields } }));
    const match = engine.match('POST', '/v1/things')!;
    const answer = await engine.handle(match, {
      method: 'POST',
      path: '/v1/things',
      query: '',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: Buffer.from(form),
      scope: '',
      origin: 'http://127.0.0.1:4010',
      basePath: '',
    });
    expect(answer.status).toBe(200);
    const id = (JSON.parse(answer.body) as { id: string }).id;
    expect(answer.body).toBe(reference(id, match.resource.plain!.defaults, form));
  });

  test('an own `__proto__` default stays a field, and the defaults are never changed', async () => {
    const fields = JSON.parse('{"object":"o","__proto__":{"x":1},"metadata":{}}') as Record<string, unknown>;
    const [things] = compileResources(
      configOf({ things: { style: 'stripe', path: '/v1/things', fields } }).resources,
      [],
    );
    const before = JSON.stringify(things!.plain!.defaults);
    const engine = new ResourceEngine({
      store: new MemoryResourceStore(),
      clock: () => 0,
      seed: () => 7,
      logger: silentLogger,
    });
    await engine.follow(configOf({ things: { style: 'stripe', path: '/v1/things', fields } }));
    const match = engine.match('POST', '/v1/things')!;
    const answer = await engine.handle(match, {
      method: 'POST',
      path: '/v1/things',
      query: '',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: Buffer.from('metadata[a]=1'),
      scope: '',
      origin: 'http://127.0.0.1:4010',
      basePath: '',
    });
    const id = (JSON.parse(answer.body) as { id: string }).id;
    expect(answer.body).toBe(`{"id":"${id}","object":"o","__proto__":{"x":1},"metadata":{"a":"1"}}`);
    expect(JSON.stringify(match.resource.plain!.defaults)).toBe(before);
    expect(({} as Record<string, unknown>).x).toBeUndefined();
  });
});

describe('form names as keys', () => {
  test('any names read as they did, past the number of names kept, refused ones still refused', () => {
    const fields: Record<string, string> = {};
    const pairs: string[] = [];
    for (let i = 0; i < 2_500; i++) {
      pairs.push(`name${i % 1_300}=v${i}`);
      fields[`name${i % 1_300}`] = `v${i}`;
    }
    expect(parseForm(pairs.join('&'), true)).toEqual(fields);
    const long = 'k'.repeat(100);
    expect(parseForm(`${long}=1&a[${long}]=2`, true)).toEqual({ [long]: '1', a: { [long]: '2' } });
    for (const name of ['__proto__', 'constructor', 'a[__proto__]', 'a[b][prototype]'])
      expect(() => parseForm(`${name}=1`, true)).toThrow(/Received unknown parameter/);
    expect(parseForm('=1&&a=&b&c=%41', true)).toEqual({ '': '1', a: null, b: null, c: 'A' });
  });
});
