import { describe, expect, it } from 'vitest';
import { compileString, type RequestContext } from '../../../src/expression/index.js';
import { makeContext } from '../../helpers/answer.js';

const ctx = makeContext({
  params: { id: '42', name: 'ada' },
  query: { page: '2', tag: ['a', 'b'], empty: '' },
  headers: { 'x-request-id': 'req-1', 'content-type': 'application/json' },
  cookies: { session: 's1' },
  body: {
    amount: 12.5,
    user: { name: 'Ada', tags: ['x', 'y'] },
    items: [{ sku: 'A' }, { sku: 'B' }],
    'odd key': true,
    nothing: null,
  },
  request: 3,
  state: { order: 'created' },
});

function run(text: string, context: RequestContext = ctx, env?: Record<string, string>): unknown {
  const result = compileString(text, { env, allowIndex: true });
  if (!result.ok) throw new Error(`${result.issue.message} @${result.issue.offset}`);
  return result.value.evaluate(context, 7);
}

describe('expressions: typed when alone, interpolated in text', () => {
  it.each<[string, unknown]>([
    ['${params.id}', '42'],
    ['${int(params.id)}', 42],
    ['${body.amount}', 12.5],
    ['${body.user}', { name: 'Ada', tags: ['x', 'y'] }],
    ['${body.user.tags[1]}', 'y'],
    ['${body.items[1].sku}', 'B'],
    ["${body['odd key']}", true],
    ['${body["user"]["name"]}', 'Ada'],
    ['${body.nothing}', null],
    ['${body.missing.deeper[3]}', null],
    ['${request}', 3],
    ['${state.order}', 'created'],
    ['${now}', '2026-03-04T05:06:07.000Z'],
    ['${index}', 7],
    ['${query.tag}', ['a', 'b']],
    ['${cookies.session}', 's1'],
    ['${true}', true],
    ['${null}', null],
    ['${-3.5}', -3.5],
    ['${1e3}', 1000],
    ["${'it\\'s'}", "it's"],
    ['${"tab\\tand \\u00e9"}', 'tab\tand é'],
    ['${[1, params.id, body.missing ?? 2]}', [1, '42', 2]],
    ["${{ id: int(params.id), 'x-y': true }}", { id: 42, 'x-y': true }],
    ['id ${params.id}!', 'id 42!'],
    ['${params.id}${params.name}', '42ada'],
    ['[${body.missing}]', '[]'],
    ['user: ${body.user}', 'user: {"name":"Ada","tags":["x","y"]}'],
    ['  ${params.id}  ', '  42  '],
    ['no expressions', 'no expressions'],
    ['cost: $5 and $${literal}', 'cost: $5 and ${literal}'],
    ['$${params.id} is ${params.id}', '${params.id} is 42'],
    ['${ params . id }', '42'],
  ])('%s → %j', (text, expected) => {
    expect(run(text)).toEqual(expected);
  });
});

describe('expressions: headers are read in any case', () => {
  it.each([
    '${headers.x-request-id}',
    '${headers.X-Request-ID}',
    "${headers['X-REQUEST-ID']}",
    '${headers[lower("X-Request-Id")]}',
    '${headers[upper("x-request-id")]}',
  ])('%s', (text) => {
    expect(run(text)).toBe('req-1');
  });
});

describe('expressions: ?? and +', () => {
  it.each<[string, unknown]>([
    ['${query.name ?? "you"}', 'you'],
    ['${body.nothing ?? "was null"}', 'was null'],
    ['${query.empty ?? "x"}', ''],
    ['${query.page ?? "1"}', '2'],
    ['${int(query.page) + 1}', 3],
    ['${query.page + 1}', '21'],
    ['${"a" + "b" + 1 + 2}', 'ab12'],
    ['${1 + 2 + "a"}', '3a'],
    ['${query.a ?? query.b ?? "z"}', 'z'],
    ['${body.missing + "x"}', 'x'],
    ['${query.none ?? "p" + "q"}', 'pq'],
    ['${(query.none ?? "p") + "q"}', 'pq'],
    ['Hello ${query.name ?? "you"}', 'Hello you'],
  ])('%s → %j', (text, expected) => {
    expect(run(text)).toEqual(expected);
  });
});

describe('expressions: functions', () => {
  it.each<[string, unknown]>([
    ['${int("4.7")}', 4],
    ['${int("-4.7")}', -4],
    ['${int("abc")}', null],
    ['${int(body.missing)}', null],
    ['${number("4.5")}', 4.5],
    ['${number("")}', null],
    ['${string(7)}', '7'],
    ['${string(body.user.tags)}', '["x","y"]'],
    ['${string(body.missing)}', null],
    ['${upper(params.name)}', 'ADA'],
    ['${lower("ÀB")}', 'àb'],
    ['${json(body.items[0])}', '{"sku":"A"}'],
    ['${json(body.missing)}', null],
    ['${len(params.name)}', 3],
    ['${len(body.items)}', 2],
    ['${len(body.user)}', 2],
    ['${len(3)}', null],
    ['${default(query.empty, "d")}', 'd'],
    ['${default(query.page, "d")}', '2'],
    ['${default(body.nothing, 0)}', 0],
    ['${date()}', '2026-03-04T05:06:07.000Z'],
    ["${date('-1d')}", '2026-03-03T05:06:07.000Z'],
    ["${date('+2h')}", '2026-03-04T07:06:07.000Z'],
    ["${date('30m')}", '2026-03-04T05:36:07.000Z'],
    ["${date('1w')}", '2026-03-11T05:06:07.000Z'],
    ['${date(-1000)}', '2026-03-04T05:06:06.000Z'],
    ['${date(query.page)}', null],
  ])('%s → %j', (text, expected) => {
    expect(run(text)).toEqual(expected);
  });

  it('randomInt stays within its bounds, both included, and swaps reversed bounds', () => {
    const seen = new Set<unknown>();
    for (let n = 1; n <= 300; n++) seen.add(run('${randomInt(1, 3)}', makeContext({ request: n })));
    expect([...seen].sort()).toEqual([1, 2, 3]);
    expect(run('${randomInt(5, 5)}')).toBe(5);
    expect(run('${randomInt(9, 7)}')).toBeGreaterThanOrEqual(7);
    expect(run('${randomInt("a", 7)}')).toBeNull();
  });

  it('uuid() is a version-4 UUID', () => {
    expect(run('${uuid()}')).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
  });
});

describe('expressions: env.MOCKAPI_* is read at compile time', () => {
  it.each<[string, unknown]>([
    ['${env.MOCKAPI_TOKEN}', 'tok'],
    ['Bearer ${env.MOCKAPI_TOKEN}', 'Bearer tok'],
    ["${env['MOCKAPI_TOKEN']}", 'tok'],
    ['${env.MOCKAPI_UNSET ?? "none"}', 'none'],
  ])('%s → %j', (text, expected) => {
    expect(run(text, ctx, { MOCKAPI_TOKEN: 'tok', HOME: '/root' })).toEqual(expected);
  });
});

describe('compileString kinds', () => {
  it.each<[string, string]>([
    ['plain', 'constant'],
    ['$${x}', 'constant'],
    ['${params.id}', 'typed'],
    ['a ${params.id}', 'text'],
    ['', 'constant'],
  ])('%j is %s', (text, kind) => {
    const result = compileString(text);
    expect(result.ok && result.value.kind).toBe(kind);
  });

  it('reports usesRandom and usesFaker', () => {
    const plain = compileString('${params.id}');
    const random = compileString('${uuid()}');
    const fake = compileString('${fake.person.firstName()}');
    expect(plain.ok && [plain.value.usesRandom, plain.value.usesFaker]).toEqual([false, false]);
    expect(random.ok && [random.value.usesRandom, random.value.usesFaker]).toEqual([true, false]);
    expect(fake.ok && [fake.value.usesRandom, fake.value.usesFaker]).toEqual([true, true]);
  });
});
