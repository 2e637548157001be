import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { basename, join, resolve } from 'node:path';
import FindMyWay from 'find-my-way';
import { describe, expect, test } from 'vitest';
import { formatIssue, loadConfig } from '../../src/config/load.js';
import type { ConfigIssue } from '../../src/config/types.js';

// Each test/fixtures/invalid/<name>.yaml is paired with <name>.expected.txt: the exact lines
// `mockapi validate` prints for it, with the file name alone and `<dir>` for the fixture folder.
// UPDATE_EXPECTED=1 rewrites them from the current output (review the diff before committing).
const INVALID = resolve('test/fixtures/invalid');
const VALID = resolve('test/fixtures/valid');
const yamlFiles = (dir: string) =>
  readdirSync(dir)
    .filter((f) => f.endsWith('.yaml'))
    .sort();

function printed(issues: ConfigIssue[]): string[] {
  return issues.map((issue) =>
    formatIssue({ ...issue, file: basename(issue.file) })
      .split(INVALID)
      .join('<dir>'),
  );
}

describe('invalid fixtures print exactly their expected issues', () => {
  const files = yamlFiles(INVALID);

  test('there are at least 40 of them, each with an .expected.txt', () => {
    expect(files.length).toBeGreaterThanOrEqual(40);
    const expected = readdirSync(INVALID).filter((f) => f.endsWith('.expected.txt'));
    expect(expected.map((f) => f.replace('.expected.txt', '.yaml')).sort()).toEqual(files);
  });

  test.each(files)('%s', async (name) => {
    const result = await loadConfig(join(INVALID, name));
    expect(result.ok).toBe(false);
    if (result.ok) return;
    const lines = printed(result.issues);
    const expectedFile = join(INVALID, name.replace(/\.yaml$/, '.expected.txt'));
    if (process.env.UPDATE_EXPECTED === '1') writeFileSync(expectedFile, `${lines.join('\n')}\n`);
    expect(lines).toEqual(readFileSync(expectedFile, 'utf8').trimEnd().split('\n'));
    // every issue has a position in the file and names a field or the file
    for (const issue of result.issues) {
      expect(issue.line).toBeGreaterThanOrEqual(1);
      expect(issue.column).toBeGreaterThanOrEqual(1);
    }
  });
});

describe('valid fixtures', () => {
  test.each(yamlFiles(VALID))('%s loads', async (name) => {
    const result = await loadConfig(join(VALID, name));
    expect(result.ok ? [] : result.issues.map(formatIssue)).toEqual([]);
  });

  test('every valid path registers in the router (find-my-way with the server options)', async () => {
    for (const name of yamlFiles(VALID)) {
      const result = await loadConfig(join(VALID, name));
      if (!result.ok) throw new Error(name);
      const router = FindMyWay({ caseSensitive: true, ignoreTrailingSlash: true });
      for (const e of result.config.endpoints) expect(() => router.on(e.method, e.path, () => {})).not.toThrow();
    }
  });

  test('the SPEC example becomes this Config, with every default applied', async () => {
    const file = join(VALID, 'spec-example.yaml');
    const bytes = readFileSync(file);
    const result = await loadConfig(file);
    expect(result).toEqual({
      ok: true,
      config: {
        file,
        dir: VALID,
        project: 'shop-api',
        apiKey: 'mk_9WbDq2vG0yq7Jc4TnR1sXe8ZkP3fLmA6',
        server: { port: 4010, host: '127.0.0.1', cors: true, maxBodySize: 1048576, journal: 1000 },
        limits: { rateLimit: { requests: 100, windowMs: 60000 }, monthlyQuota: 10000 },
        endpoints: [
          {
            method: 'GET',
            path: '/users/:id',
            failRate: 0.1,
            delayMs: 120,
            response: { status: 200, headers: { 'x-request-id': 'demo' }, body: { id: 42, name: 'Ada' } },
          },
          {
            method: 'POST',
            path: '/orders',
            failRate: 0,
            delayMs: 0,
            response: { status: 201, headers: {}, bodyFile: join(VALID, 'fixtures', 'order.json') },
          },
        ],
        scenarios: {},
        revision: (await import('node:crypto')).createHash('sha256').update(bytes).digest('hex'),
      },
    });
    if (result.ok) expect('seed' in result.config).toBe(false);
  });

  test('a minimal config gets the defaults; project is the folder name', async () => {
    const result = await loadConfig(join(VALID, 'minimal.yaml'));
    if (!result.ok) throw new Error('invalid');
    expect(result.config.project).toBe('valid');
    expect(result.config.endpoints).toEqual([]);
    expect(result.config.limits).toEqual({});
    expect(result.config.server).toEqual({
      port: 4010,
      host: '127.0.0.1',
      cors: true,
      maxBodySize: 1024 * 1024,
      journal: 1000,
    });
  });

  test('empty sections (`server:` with nothing under it) mean the defaults', async () => {
    const result = await loadConfig(join(VALID, 'empty-sections.yaml'));
    if (!result.ok) throw new Error('invalid');
    expect(result.config.server.port).toBe(4010);
    expect(result.config.limits).toEqual({});
    expect(result.config.endpoints).toEqual([]);
  });

  test('everything.yaml: units, any-case methods, aliases, quoted values, bodies', async () => {
    const result = await loadConfig(join(VALID, 'everything.yaml'));
    if (!result.ok) throw new Error(result.issues.map(formatIssue).join('\n'));
    const { config } = result;
    expect(config.apiKey).toBe("mk_!#$%&'()*+,-./;<=>?@[]^_`{|}~");
    expect(config.server).toEqual({ port: 0, host: '0.0.0.0', cors: false, maxBodySize: 1536, journal: 1000 });
    expect(config.seed).toBe(-42);
    expect(config.limits).toEqual({ rateLimit: { requests: 100000, windowMs: 1500 }, monthlyQuota: 1 });
    const byPath = Object.fromEntries(config.endpoints.map((e) => [`${e.method} ${e.path}`, e]));
    expect(Object.keys(byPath)).toEqual([
      'GET /',
      'HEAD /users/',
      'GET /users',
      'DELETE /users/:id',
      'OPTIONS /*',
      'PATCH /files/:dir/*',
      'PUT /café/(v1)/~me@home',
      'POST /anything',
      'GET /list',
    ]);
    expect(byPath['GET /users']?.response.headers).toEqual({ 'x-shared': 'yes' });
    expect(byPath['DELETE /users/:id']).toMatchObject({ failRate: 0.25, delayMs: 0 });
    expect(byPath['OPTIONS /*']).toMatchObject({ failRate: 1, delayMs: 3_600_000 });
    expect(byPath['PATCH /files/:dir/*']?.response).toEqual({ status: 204, headers: {} });
    expect(byPath['PUT /café/(v1)/~me@home']?.response).toEqual({
      status: 200,
      headers: { 'content-type': 'text/csv', 'x-zip': '0123' },
      body: 'a,b\n1,2\n',
    });
    expect(byPath['POST /anything']?.response).toEqual({ status: 200, headers: {}, body: null });
    expect(byPath['GET /list']?.response.body).toEqual([1, 'two', { three: 3 }, [], {}]);
  });

  test('`<<` merge keys share endpoint parts; explicit keys win; merging is shallow', async () => {
    const result = await loadConfig(join(VALID, 'merge-keys.yaml'));
    if (!result.ok) throw new Error(result.issues.map(formatIssue).join('\n'));
    expect(result.config.endpoints).toEqual([
      {
        method: 'GET',
        path: '/users/:id',
        failRate: 0,
        delayMs: 50,
        response: { status: 200, headers: { 'x-source': 'mock' }, body: { id: 1 } },
      },
      {
        method: 'GET',
        path: '/admins/:id',
        failRate: 0,
        delayMs: 50,
        response: { status: 200, headers: { 'x-source': 'mock' }, body: { id: 1 } },
      },
      { method: 'DELETE', path: '/users/:id', failRate: 0, delayMs: 50, response: { status: 204, headers: {} } },
    ]);
  });

  test('the Config is frozen', async () => {
    const result = await loadConfig(join(VALID, 'spec-example.yaml'));
    if (!result.ok) throw new Error('invalid');
    expect(Object.isFrozen(result.config)).toBe(true);
    expect(Object.isFrozen(result.config.endpoints[0]?.response.headers)).toBe(true);
    expect(Object.isFrozen(result.config.endpoints[0]?.response.body)).toBe(true);
  });
});
