import { createHash } from 'node:crypto';
import { execFileSync } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, test } from 'vitest';
import { configFromObject, formatIssue, loadConfig, MAX_CONFIG_BYTES, parseConfig } from '../../src/config/load.js';
import type { LoadResult } from '../../src/config/types.js';
import { tempDirSync } from '../helpers/cli.js';

const sha256 = (data: string | Buffer) => createHash('sha256').update(data).digest('hex');

function messages(result: LoadResult): string[] {
  return result.ok ? [] : result.issues.map(formatIssue);
}

function tempDir(): string {
  return tempDirSync('mockapi-config-');
}

describe('file problems are one issue at line 0, printed without a position', () => {
  test('missing file', async () => {
    const file = join(tempDir(), 'mockapi.yaml');
    expect(messages(await loadConfig(file))).toEqual([
      `${file}: config file not found (\`mockapi init\` writes a starter)`,
    ]);
  });

  test('a parent that is not a folder', async () => {
    const dir = tempDir();
    writeFileSync(join(dir, 'plain'), 'x');
    const file = join(dir, 'plain', 'mockapi.yaml');
    expect(messages(await loadConfig(file))).toEqual([
      `${file}: config file not found (a parent in its path is not a folder)`,
    ]);
  });

  test('a folder', async () => {
    const dir = tempDir();
    expect(messages(await loadConfig(dir))).toEqual([`${dir}: this is a folder, not a config file`]);
  });

  test('a FIFO is refused without being read', async () => {
    const fifo = join(tempDir(), 'pipe.yaml');
    execFileSync('mkfifo', [fifo]);
    expect(messages(await loadConfig(fifo))).toEqual([`${fifo}: is not a regular file`]);
  });

  test('a file larger than 5 MiB is refused before it is read', async () => {
    const file = join(tempDir(), 'big.yaml');
    const text = `apiKey: x\n# ${'x'.repeat(MAX_CONFIG_BYTES)}\n`;
    writeFileSync(file, text);
    const result = await loadConfig(file);
    expect(result.ok).toBe(false);
    if (result.ok) return;
    expect(result.issues).toHaveLength(1);
    expect(result.issues[0]).toMatchObject({ line: 0, column: 0, path: '' });
    expect(formatIssue(result.issues[0]!)).toBe(
      `${file}: the config file is ${Buffer.byteLength(text)} bytes, more than the 5242880-byte (5 MiB) limit`,
    );
  });

  test('parseConfig applies the same bound', async () => {
    expect(messages(await parseConfig(Buffer.alloc(MAX_CONFIG_BYTES + 1, 32), 'm.yaml'))).toEqual([
      'm.yaml: the config file is 5242881 bytes, more than the 5242880-byte (5 MiB) limit',
    ]);
  });

  test('bytes that are not UTF-8', async () => {
    expect(messages(await parseConfig(Buffer.from([0x61, 0x3a, 0x20, 0xff, 0xfe, 0x0a]), 'm.yaml'))).toEqual([
      'm.yaml: the config file is not UTF-8 text',
    ]);
  });

  test.skipIf(process.getuid?.() === 0)('an unreadable file', async () => {
    const file = join(tempDir(), 'secret.yaml');
    writeFileSync(file, 'apiKey: x\n', { mode: 0o000 });
    expect(messages(await loadConfig(file))).toEqual([`${file}: cannot read the config file: permission denied`]);
  });
});

describe('parseConfig', () => {
  test('revision is the sha256 of exactly the bytes given', async () => {
    const text = '\ufeffapiKey: mk_a   # with a BOM and a comment\r\n';
    const result = await parseConfig(Buffer.from(text), 'x/mockapi.yaml');
    expect(result.ok && result.config.revision).toBe(sha256(Buffer.from(text)));
    const fromString = await parseConfig(text, 'x/mockapi.yaml');
    expect(fromString.ok && fromString.config.revision).toBe(sha256(text));
  });

  test('the file path locates body files and names the project', async () => {
    const dir = tempDir();
    mkdirSync(join(dir, 'shop', 'fixtures'), { recursive: true });
    writeFileSync(join(dir, 'shop', 'fixtures', 'a.json'), '{}');
    const yaml =
      'apiKey: k\nendpoints:\n  - method: GET\n    path: /a\n    response:\n      bodyFile: fixtures/a.json\n';
    const result = await parseConfig(yaml, join(dir, 'shop', 'mockapi.yaml'));
    if (!result.ok) throw new Error(messages(result).join('\n'));
    expect(result.config.file).toBe(join(dir, 'shop', 'mockapi.yaml'));
    expect(result.config.dir).toBe(join(dir, 'shop'));
    expect(result.config.project).toBe('shop');
    expect(result.config.endpoints[0]?.response.bodyFile).toBe(join(dir, 'shop', 'fixtures', 'a.json'));
  });

  test('issues come in file order, however they were found', async () => {
    const yaml = [
      'endpoints:',
      '  - method: GET', //      duplicate (rules)
      '    path: /a',
      '  - method: GET',
      '    path: /a',
      '    delay: 1.5ms', //     unit (rules)
      'server:',
      '  port: 99999', //       range (schema)
      'colour: red', //         unknown (schema)
    ].join('\n');
    const lines = messages(await parseConfig(yaml, 'm.yaml'));
    expect(lines).toEqual([
      'm.yaml:1:1: apiKey is required',
      'm.yaml:5:11: endpoints[1] (GET /a) is the same route as endpoints[0] (GET /a, line 2); change the method or path of one',
      'm.yaml:6:12: endpoints[1].delay must be a whole number of milliseconds, got "1.5ms"',
      'm.yaml:8:9: server.port must be between 0 and 65535, got 99999',
      'm.yaml:9:1: colour is not a known field; expected one of project, apiKey, keys, plans, server, auth, seed, scenarios, limits, limitHeaders, openapi, errors, endpoints, webhooks, sessions, upstream, recording, verify, resources, idempotency, fleet',
    ]);
  });

  test('the API key never appears in a message', async () => {
    for (const key of ['"mk_secret value"', '"mk_secret:value"', '"mk_sécret"']) {
      const lines = messages(await parseConfig(`apiKey: ${key}\n`, 'm.yaml'));
      expect(lines).toHaveLength(1);
      expect(lines[0]).not.toContain('secret');
      expect(lines[0]).not.toContain('sécret');
    }
  });

  test('YAML 1.2 core schema: yes/no/on/off stay strings, 0o17 is octal, a %YAML 1.1 directive does not change that', async () => {
    const yaml = '%YAML 1.1\n---\napiKey: k\nproject: yes\nseed: 0o17\n';
    const result = await parseConfig(yaml, 'm.yaml');
    if (!result.ok) throw new Error(messages(result).join('\n'));
    expect(result.config.project).toBe('yes');
    expect(result.config.seed).toBe(15);
  });

  test('a header named __proto__ is an ordinary header', async () => {
    const yaml =
      'apiKey: k\nendpoints:\n  - method: GET\n    path: /a\n    response:\n      headers:\n        __proto__: x\n';
    const result = await parseConfig(yaml, 'm.yaml');
    if (!result.ok) throw new Error(messages(result).join('\n'));
    const headers = result.config.endpoints[0]!.response.headers;
    expect(Object.entries(headers)).toEqual([['__proto__', 'x']]);
    expect(Object.getPrototypeOf(headers)).toBe(Object.prototype);
  });

  test('a `__proto__` field at the top is an unknown field, not a prototype change', async () => {
    expect(messages(await parseConfig('apiKey: k\n__proto__: { port: 1 }\n', 'm.yaml'))).toEqual([
      'm.yaml:2:1: __proto__ is not a known field; expected one of project, apiKey, keys, plans, server, auth, seed, scenarios, limits, limitHeaders, openapi, errors, endpoints, webhooks, sessions, upstream, recording, verify, resources, idempotency, fleet',
    ]);
  });

  test('an alias bomb is refused quickly', async () => {
    let yaml = 'apiKey: k\na: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol","lol"]\n';
    let prev = 'a';
    for (const name of 'bcdefghijklmnop') {
      yaml += `${name}: &${name} [${Array(10).fill(`*${prev}`).join(',')}]\n`;
      prev = name;
    }
    const started = performance.now();
    const lines = messages(await parseConfig(yaml, 'm.yaml'));
    expect(performance.now() - started).toBeLessThan(2000);
    expect(lines).toEqual([
      "m.yaml:3:8: the config's YAML aliases expand to too much data (more than 100× reuse); refused as a possible alias bomb",
    ]);
  });

  test('aliases used with restraint are fine', async () => {
    const yaml = [
      'apiKey: k',
      'endpoints:',
      '  - method: GET',
      '    path: /a',
      '    response: &ok',
      '      status: 200',
      '      body: { ok: true }',
      '  - method: GET',
      '    path: /b',
      '    response: *ok',
    ].join('\n');
    const result = await parseConfig(yaml, 'm.yaml');
    if (!result.ok) throw new Error(messages(result).join('\n'));
    expect(result.config.endpoints.map((e) => e.response.body)).toEqual([{ ok: true }, { ok: true }]);
  });

  test('a deeply nested document is an issue, not an exception', async () => {
    const deep = `apiKey: k\nendpoints:\n  - method: GET\n    path: /a\n    response:\n      body: ${'['.repeat(20000)}${']'.repeat(20000)}\n`;
    const result = await parseConfig(deep, 'm.yaml');
    expect(result.ok).toBe(false);
    if (!result.ok) expect(result.issues.length).toBeGreaterThan(0);
  });

  test('a document nested too deeply for the YAML reader is one issue', async () => {
    const deep = `apiKey: k\nendpoints:\n  - method: GET\n    path: /a\n    response:\n      body: ${'['.repeat(5000)}${']'.repeat(5000)}\n`;
    const lines = messages(await parseConfig(deep, 'm.yaml'));
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(/^m\.yaml(:6:\d+)?: the config is nested too deeply to be read$/);
  });
});

describe('`<<` merge keys', () => {
  // The anchors live in the body itself, where any data is allowed (line 10).
  const HEAD =
    'apiKey: mk_merge\nendpoints:\n  - method: GET\n    path: /a\n    response:\n      body:\n        defs: [&m { a: 1 }, &l [{ b: 2 }, *m], &s 3]\n';
  const DEFS = [{ a: 1 }, [{ b: 2 }, { a: 1 }], 3];
  const bodyOf = async (lines: string): Promise<unknown> => {
    const result = await parseConfig(`${HEAD}${lines}`, 'm.yaml');
    return result.ok ? result.config.endpoints[0]!.response.body : result.issues.map(formatIssue);
  };
  const BAD =
    '`<<` is a YAML merge key: its value must be a mapping, an alias of one, or a list of those; to use `<<` as an ordinary key, quote it ("<<")';

  test('merge a mapping, an alias, a list of them, or an alias of such a list', async () => {
    expect(
      await bodyOf(
        '        x: { <<: { c: 3 }, d: 4 }\n        y: { <<: *m }\n        z: { <<: [*m, { e: 5 }] }\n        w: { <<: *l }\n',
      ),
    ).toEqual({
      defs: DEFS,
      x: { c: 3, d: 4 },
      y: { a: 1 },
      z: { a: 1, e: 5 },
      w: { b: 2, a: 1 },
    });
  });

  test('a quoted "<<" is an ordinary key', async () => {
    expect(await bodyOf('        "<<": false\n        x: { \'<<\': 1 }\n')).toEqual({
      defs: DEFS,
      '<<': false,
      x: { '<<': 1 },
    });
  });

  test('anything else under `<<` is an issue at that key, not at line 1', async () => {
    expect(await bodyOf('        <<: false\n')).toEqual([`m.yaml:8:9: ${BAD}`]);
    expect(await bodyOf('        ok: 1\n        x: { <<: *s }\n')).toEqual([`m.yaml:9:14: ${BAD}`]);
    expect(await bodyOf('        x: { <<: [*m, 3] }\n')).toEqual([`m.yaml:8:14: ${BAD}`]);
    expect(await bodyOf('        x: { <<: *l, y: { <<: null } }\n')).toEqual([`m.yaml:8:27: ${BAD}`]);
  });
});

describe('a 10,000-endpoint config', () => {
  function bigConfig(count: number): string {
    const lines = ['apiKey: mk_big', 'endpoints:'];
    for (let i = 0; i < count; i++) {
      lines.push(
        '  - method: GET',
        `    path: /resources/r${i}/items/:id`,
        '    delay: 20ms',
        '    response:',
        '      status: 200',
        `      body: { id: ${i}, name: "Resource ${i}" }`,
      );
    }
    return `${lines.join('\n')}\n`;
  }

  test('loads', async () => {
    const yaml = bigConfig(10_000);
    expect(Buffer.byteLength(yaml)).toBeGreaterThan(1_400_000);
    const result = await parseConfig(yaml, 'big.yaml');
    if (!result.ok) throw new Error(messages(result).slice(0, 5).join('\n'));
    expect(result.config.endpoints).toHaveLength(10_000);
    expect(result.config.endpoints[9_999]).toMatchObject({
      path: '/resources/r9999/items/:id',
      delayMs: 20,
      response: { body: { id: 9999 } },
    });
  });

  test('reports a duplicate at the very end, naming the first', async () => {
    const yaml = `${bigConfig(10_000)}  - method: get\n    path: /resources/r0/items/:other/\n`;
    expect(messages(await parseConfig(yaml, 'big.yaml'))).toEqual([
      'big.yaml:60004:11: endpoints[10000] (GET /resources/r0/items/:other/) is the same route as endpoints[0] (GET /resources/r0/items/:id, line 3) (parameter names and a trailing slash do not make routes different); change the method or path of one',
    ]);
  });
});

describe('configFromObject', () => {
  test('validates like a file, labels issues <config object> without positions', () => {
    const result = configFromObject(
      { apiKey: 'k', endpoints: [{ method: 'GET', path: '/a', failRate: 1.5 }], servr: {} },
      '/srv/app',
    );
    expect(messages(result)).toEqual([
      '<config object>: servr is not a known field; did you mean `server`?',
      '<config object>: endpoints[0].failRate must be between 0 and 1, got 1.5',
    ]);
    if (!result.ok)
      expect(result.issues.every((i) => i.line === 0 && i.column === 0 && i.file === '<config object>')).toBe(true);
  });

  test('builds a frozen Config without freezing or keeping the caller object', () => {
    const value = {
      apiKey: 'k',
      endpoints: [{ method: 'post', path: '/a', delay: '1s', response: { body: { n: 1 } } }],
    };
    const result = configFromObject(value, '/srv/app');
    if (!result.ok) throw new Error(messages(result).join('\n'));
    expect(result.config).toMatchObject({ dir: '/srv/app', project: 'app', revision: sha256(JSON.stringify(value)) });
    expect(result.config.file).toBeUndefined();
    expect(result.config.endpoints[0]).toMatchObject({ method: 'POST', delayMs: 1000, response: { body: { n: 1 } } });
    expect(Object.isFrozen(value.endpoints[0]!.response.body)).toBe(false);
    value.endpoints[0]!.response.body.n = 2;
    expect(result.config.endpoints[0]!.response.body).toEqual({ n: 1 });
  });

  test('bodyFile is resolved against dir', () => {
    const dir = tempDir();
    writeFileSync(join(dir, 'a.json'), '{}');
    const result = configFromObject(
      { apiKey: 'k', endpoints: [{ method: 'GET', path: '/a', response: { bodyFile: 'a.json' } }] },
      dir,
    );
    expect(result.ok && result.config.endpoints[0]?.response.bodyFile).toBe(join(dir, 'a.json'));
  });

  test('values JSON cannot carry are refused with their place', () => {
    const cyclic: Record<string, unknown> = { a: 1 };
    cyclic.self = cyclic;
    const body = (value: unknown) => ({
      apiKey: 'k',
      endpoints: [{ method: 'GET', path: '/a', response: { body: value } }],
    });
    expect(messages(configFromObject(body(cyclic), '/'))).toEqual([
      '<config object>: endpoints[0].response.body.self contains itself (a cycle), which JSON cannot represent',
    ]);
    expect(messages(configFromObject(body({ n: 10n }), '/'))).toEqual([
      '<config object>: endpoints[0].response.body.n cannot be sent as JSON (a bigint)',
    ]);
    expect(messages(configFromObject(body([() => 1]), '/'))).toEqual([
      '<config object>: endpoints[0].response.body[0] cannot be sent as JSON (a function)',
    ]);
    expect(messages(configFromObject(body({ when: new Date(0) }), '/'))).toEqual([
      '<config object>: endpoints[0].response.body.when cannot be sent as JSON (a Date); use mappings, lists, strings, numbers, booleans and null',
    ]);
    expect(messages(configFromObject(body(Number.POSITIVE_INFINITY), '/'))).toEqual([
      '<config object>: endpoints[0].response.body is .inf, which JSON cannot represent',
    ]);
  });

  test('a body nested deeper than 1000 levels is refused', () => {
    let body: unknown = 'leaf';
    for (let i = 0; i < 1001; i++) body = [body];
    const lines = messages(
      configFromObject({ apiKey: 'k', endpoints: [{ method: 'GET', path: '/a', response: { body } }] }, '/'),
    );
    expect(lines).toEqual([
      `<config object>: endpoints[0].response.body${'[0]'.repeat(1000)} is nested more than 1000 levels deep`,
    ]);
  });

  test('a shared (not cyclic) value is fine', () => {
    const shared = { x: [1, 2] };
    const result = configFromObject(
      { apiKey: 'k', endpoints: [{ method: 'GET', path: '/a', response: { body: { a: shared, b: shared } } }] },
      '/',
    );
    expect(result.ok).toBe(true);
  });

  test.each([null, undefined, 42, 'apiKey: k', [], new Map()])('never throws for %s', (value) => {
    const result = configFromObject(value, '/');
    expect(result.ok).toBe(false);
    if (!result.ok) expect(result.issues.length).toBeGreaterThan(0);
  });
});

describe('formatIssue', () => {
  test('file:line:col: message, or file: message without a position', () => {
    expect(
      formatIssue({
        file: 'mockapi.yaml',
        line: 14,
        column: 15,
        path: 'endpoints[1].failRate',
        message: 'endpoints[1].failRate must be between 0 and 1, got 1.5',
      }),
    ).toBe('mockapi.yaml:14:15: endpoints[1].failRate must be between 0 and 1, got 1.5');
    expect(formatIssue({ file: 'mockapi.yaml', line: 0, column: 0, path: '', message: 'config file not found' })).toBe(
      'mockapi.yaml: config file not found',
    );
  });
});
