import { readFileSync } from 'node:fs';
import fc from 'fast-check';
import { Document, type ToStringOptions } from 'yaml';
import { describe, expect, test } from 'vitest';
import { readYamlFast } from '../../src/config/fast-read.js';
import { memoOfRead, readYamlReusing, type ReadMemo } from '../../src/config/fast-read-reuse.js';
import { configFromObject, formatIssue, parseConfig } from '../../src/config/load.js';
import { describeConfigChange } from '../../src/config/diff.js';
import type { Config, LoadResult } from '../../src/config/types.js';
import { canonical } from '../helpers/canonical.js';

/**
 * A reload reads again only the endpoints whose lines changed (config/fast-read-reuse.ts). Whenever
 * that reading answers, its data must be exactly what the fast reader gives for the whole text
 * (which test/unit/config-fast-read.test.ts holds to `yaml`); declining is always allowed.
 */

/** The memo of a first, whole read of `text` (as a load leaves it), or undefined. */
function firstRead(text: string): ReadMemo | undefined {
  const whole = readYamlFast(text, 3);
  return whole === undefined ? undefined : memoOfRead(text, whole);
}

/** Reads `text` reusing `memo` and holds the answer to the whole read; returns the next memo, if it answered. */
function expectSameAsWhole(text: string, memo: ReadMemo): ReadMemo | undefined {
  const reused = readYamlReusing(text, memo);
  if (reused === undefined) return undefined;
  const whole = readYamlFast(text);
  if (whole === undefined) throw new Error(`the reusing read answered where the whole read declines:\n${text}`);
  if (canonical(reused.data) !== canonical(whole.data)) {
    throw new Error(
      `the reads differ on:\n${text}\nreused: ${canonical(reused.data)}\nwhole:  ${canonical(whole.data)}`,
    );
  }
  return reused.memo;
}

const item = (i: number, body = `{id: ${i}}`) =>
  `  - method: GET\n    path: /r${i}\n    response:\n      body: ${body}\n`;
const config = (items: string[], head = 'project: p\napiKey: mk_test\n', tail = '') =>
  `${head}endpoints:\n${items.join('')}${tail}`;
const five = [0, 1, 2, 3, 4].map((i) => item(i));

describe('reading a changed config again, endpoint by endpoint', () => {
  test('unchanged endpoints are the very objects read before; changed ones are read again', () => {
    const before = config(five);
    const memo = firstRead(before)!;
    expect(memo).toBeDefined();
    const first = readYamlReusing(before, memo)!;
    const changed = config(
      five.map((lines, i) => (i === 2 ? item(2, '{id: 2, changed: true}') : lines)),
      'project: q\napiKey: mk_test\n',
    );
    const next = readYamlReusing(changed, first.memo)!;
    const list = (read: { data: unknown }) => (read.data as { endpoints: unknown[] }).endpoints;
    expect(list(next).map((value, i) => value === list(first)[i])).toEqual([true, true, false, true, true]);
    expect(list(next)[2]).toEqual({ method: 'GET', path: '/r2', response: { body: { id: 2, changed: true } } });
    expect((next.data as { project: string }).project).toBe('q');
    // added, removed and moved endpoints
    const moved = config([five[4]!, five[0]!, item(7), five[1]!, five[3]!]);
    const after = readYamlReusing(moved, next.memo)!;
    expect(list(after).map((value) => list(next).indexOf(value))).toEqual([4, 0, -1, 1, 3]);
    expectSameAsWhole(moved, next.memo);
  });

  test.each([
    // texts whose lines look like a list of endpoints but are not read as one
    ['a: "x\nendpoints:\n  - a\n"\nendpoints: [0]\n', 'the list inside a quoted scalar'],
    ['a: [1,\nendpoints:\n  - a\n  ]\n', 'the list inside a flow collection'],
    ['endpoints:\n  - a: "x\n  - b"\n', 'a quoted scalar over an item line'],
    ['endpoints:\n  - a: [1,\n  - 2]\n', 'a flow collection over an item line'],
    ['endpoints:\n  - a: 1\n- b\n', 'a less indented item'],
    ['endpoints:\n  - a: 1\n  b: 2\n', 'a line at the items column that is no item'],
    ['endpoints:\n  - a: 1\r  - b: 2\n', 'a carriage return alone'],
    ['endpoints:\n  - a: 1\n  - a: 1\n', 'the same item twice'],
    ['endpoints:\n  -\n  - a: 1\n', 'an empty item'],
    ['endpoints:\n\t- a: 1\n', 'a tab in indentation'],
  ])('%j (%s): the same data as the whole read, or none', (text) => {
    const memo = firstRead(text);
    if (memo !== undefined) expectSameAsWhole(text, memo);
    const other = firstRead(config(five));
    expectSameAsWhole(text, other!);
    // and edits of it
    for (const edited of [text.replace('a', 'c'), text.replace('1', '2'), `x: 1\n${text}`]) {
      if (memo !== undefined) expectSameAsWhole(edited, memo);
    }
  });

  test('a key read as another value in one item and a value of that text in another decline, as the whole read does', () => {
    const memo = firstRead(config(five))!;
    const keyed = config([...five, '  - method: GET\n    path: /x\n    response:\n      body: {"true": 1}\n']);
    const next = expectSameAsWhole(keyed, memo);
    expect(next).toBeDefined();
    const reshaped = config([
      ...five,
      '  - method: GET\n    path: /x\n    response:\n      body: {"true": 1}\n',
      '  - method: GET\n    path: /y\n    response:\n      body: True\n',
    ]);
    expect(readYamlFast(reshaped)).toBeUndefined();
    expect(readYamlReusing(reshaped, next!)).toBeUndefined();
  });

  test('a list nested 100 levels deep in the file is refused as in the whole read', () => {
    const deep = (n: number) => `  - ${'['.repeat(n)}1${']'.repeat(n)}\n`;
    for (const depth of [96, 97, 98, 99]) {
      const memo = firstRead(config(five))!;
      const text = config([...five, deep(depth)]);
      expect(readYamlReusing(text, memo) === undefined).toBe(readYamlFast(text) === undefined);
      expectSameAsWhole(text, memo);
    }
  });

  test('layouts: items at column 0, comments and blank lines between them, CRLF, a section after the list, no final newline', () => {
    const texts = [
      'apiKey: k\nendpoints:\n- method: GET\n  path: /a\n- method: GET\n  path: /b\nserver:\n  port: 1\n',
      'apiKey: k\nendpoints: # the list\n  # first\n  - method: GET\n    path: /a\n\n# between\n  - method: GET\n    path: /b # here\n\nscenarios: {}\n',
      'apiKey: k\r\nendpoints:\r\n  - method: GET\r\n    path: /a\r\n  - method: GET\r\n    path: /b\r\n',
      'apiKey: k\nendpoints:\n    - method: GET\n      path: /a\n      response:\n        body: |\n          line\n\n          more\n    - {method: GET, path: /b}',
    ];
    for (const text of texts) {
      const memo = firstRead(text);
      expect(memo).toBeDefined();
      const next = expectSameAsWhole(text.replace('apiKey: k', 'apiKey: k2'), memo!);
      expect(next).toBeDefined();
      expectSameAsWhole(text.replace('/b', '/c'), next!);
    }
  });

  // Configs written by yaml in every style (the top level and the list in block style, as configs
  // are), then edited at random: an item changed, added, removed or moved, or a random piece of YAML
  // put anywhere (mostly breaking the text).
  const piece = fc.constantFrom(
    '"',
    "'",
    '[',
    ']',
    '{',
    '}',
    '#',
    ' #',
    '\n',
    '\n  ',
    '\n  - ',
    '\n- ',
    '- ',
    ': ',
    '|\n',
    '>-\n',
    '~',
    'True',
    '0123',
    '&a ',
    '*a',
    '\t',
    '\r',
    '\r\n',
    'endpoints:\n',
  );
  const edit = fc.oneof(
    fc.record({
      kind: fc.constant('piece' as const),
      at: fc.nat(),
      text: fc.array(piece, { minLength: 1, maxLength: 3 }).map((p) => p.join('')),
    }),
    fc.record({
      kind: fc.constantFrom('add' as const, 'remove' as const, 'move' as const, 'change' as const),
      at: fc.nat(),
      value: fc.jsonValue({ maxDepth: 2 }),
    }),
  );
  const styles = fc.record({
    collectionStyle: fc.constantFrom('any', 'block', 'flow'),
    defaultStringType: fc.constantFrom('PLAIN', 'QUOTE_DOUBLE', 'QUOTE_SINGLE', 'BLOCK_LITERAL', 'BLOCK_FOLDED'),
    defaultKeyType: fc.constantFrom(null, 'PLAIN'),
    lineWidth: fc.constantFrom(0, 20, 80),
    indent: fc.constantFrom(2, 4),
    indentSeq: fc.boolean(),
  });
  const endpoint = fc.oneof(
    fc.jsonValue({ maxDepth: 3 }),
    fc.record({
      method: fc.constantFrom('GET', 'POST'),
      path: fc.string(),
      response: fc.record({ body: fc.jsonValue({ maxDepth: 2 }) }),
    }),
  );

  test('on random configs and edits', () => {
    let answered = 0;
    fc.assert(
      fc.property(
        fc.array(endpoint, { minLength: 1, maxLength: 8 }),
        fc.jsonValue({ maxDepth: 2 }),
        styles,
        fc.array(edit, { minLength: 1, maxLength: 4 }),
        (values, other, opts, edits) => {
          const write = (list: unknown[]) => {
            const doc = new Document({ apiKey: 'k', other, endpoints: list, after: 1 });
            (doc.contents as { flow?: boolean }).flow = false;
            (doc.get('endpoints', true) as { flow?: boolean }).flow = false;
            return doc.toString(opts as ToStringOptions);
          };
          const list = [...values];
          let text = write(list);
          let memo = firstRead(text);
          for (const change of edits) {
            if (change.kind === 'piece') {
              const at = change.at % (text.length + 1);
              text = `${text.slice(0, at)}${change.text}${text.slice(at)}`;
            } else {
              const at = change.at % (list.length + 1);
              if (change.kind === 'add') list.splice(at, 0, change.value);
              else if (change.kind === 'remove') list.splice(at, 1);
              else if (change.kind === 'move') list.push(...list.splice(at, 1));
              else list[at] = change.value;
              text = write(list);
            }
            if (memo === undefined) {
              memo = firstRead(text);
              continue;
            }
            const next = expectSameAsWhole(text, memo);
            if (next !== undefined) answered++;
            memo = next ?? firstRead(text);
          }
        },
      ),
      { numRuns: 1500 },
    );
    expect(answered).toBeGreaterThan(250); // the property is not vacuous
  });
});

describe('a reload of a config file, with the config served before', () => {
  const file = '/nonexistent-dir/mockapi.yaml';
  const messages = (result: LoadResult): string[] => (result.ok ? [] : result.issues.map(formatIssue));
  const load = async (text: string, previous?: Config): Promise<Config> => {
    const loaded = await parseConfig(text, file, previous);
    if (!loaded.ok) throw new Error(messages(loaded).join('\n'));
    return loaded.config;
  };

  test('reports every problem exactly as a first load does (the endpoints that passed before are checked again)', async () => {
    const served = await load(config(five));
    const reloaded = await load(config(five, 'project: again\napiKey: mk_test\n'), served);
    const broken = [
      config([...five, '  - method: GTE\n    path: /x\n']),
      config([...five, '  - method: GET\n    path: no-slash\n    response: {status: 99}\n']),
      config([...five, item(1)]),
      config([
        ...five.slice(0, 4),
        '  - method: GET\n    path: /r4\n    response:\n      body: {id: 4}\n    failRate: 150%\n',
      ]),
      config(five, 'project: p\n'),
      config(five, 'project: p\napiKey: mk_test\nlimits: {rateLimit: {requests: 0, window: 1x}}\n'),
      config([...five, '  - method: GET\n    path: /x\n    response:\n      body: "unclosed\n']),
      `${config(five)}scenarios: [1]\n`,
    ];
    for (const text of broken) {
      const fresh = messages(await parseConfig(text, file));
      expect(fresh.length).toBeGreaterThan(0);
      expect(messages(await parseConfig(text, file, reloaded))).toEqual(fresh);
      expect(messages(await parseConfig(text, file, served))).toEqual(fresh);
    }
  });

  test("what is kept for endpoint data read from a file is never taken for a caller's object, which may change", () => {
    const value = {
      apiKey: 'mk_test',
      endpoints: [
        { method: 'GET', path: '/a' },
        { method: 'GET', path: '/b' },
      ],
    };
    expect(configFromObject(value, '.').ok).toBe(true);
    value.endpoints[1]!.path = '/a/';
    expect(messages(configFromObject(value, '.'))).toEqual([
      expect.stringContaining('(GET /a/) is the same route as endpoints[0] (GET /a)'),
    ]);
    value.endpoints[1]!.path = '/b';
    (value.endpoints[0] as Record<string, unknown>).failRate = 2;
    expect(messages(configFromObject(value, '.'))).toEqual([expect.stringContaining('endpoints[0].failRate')]);
  });

  test('the reload summary names what changed as when no endpoint is reused', async () => {
    const served = await load(config(five));
    const edits: [string, string][] = [
      [config(five, 'project: q\napiKey: mk_test\n'), 'no endpoint changes; project changed'],
      [config([item(9), ...five]), '+1 endpoint (GET /r9)'],
      [
        config([...five.slice(0, 2), item(2, '{id: 2, changed: true}'), ...five.slice(3), item(8)]),
        '+1 endpoint (GET /r8), ~1 changed (GET /r2)',
      ],
      [config([five[4]!, ...five.slice(1, 4), five[0]!]), 'no endpoint changes'],
      [config([...five.slice(1, 4), item(4, '{id: 4, changed: true}')]), '-1 endpoint (GET /r0), ~1 changed (GET /r4)'],
    ];
    for (const [text, summary] of edits) {
      const next = await load(text, served);
      expect(describeConfigChange(served, next)).toBe(`reloaded mockapi.yaml: ${summary}`);
      // the same config built afresh: no endpoint object shared with the one served
      const fresh = await load(text);
      expect(next.endpoints.some((e) => served.endpoints.includes(e))).toBe(true);
      expect(fresh.endpoints.some((e) => served.endpoints.includes(e))).toBe(false);
      expect(describeConfigChange(served, next)).toBe(describeConfigChange(served, fresh));
    }
  });

  test('the schema checks each endpoint on its own (what lets a reload leave out the unchanged ones)', () => {
    const schema = JSON.parse(readFileSync('schema/mockapi.schema.json', 'utf8')) as {
      properties: { endpoints: Record<string, unknown> };
    };
    // A keyword about the list as a whole (maxItems, uniqueItems, contains…) would need the whole list checked.
    expect(Object.keys(schema.properties.endpoints).sort()).toEqual(['description', 'items', 'type']);
  });
});
