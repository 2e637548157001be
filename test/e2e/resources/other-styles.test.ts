// The github, openai and rest styles without HTTP: status codes, Location, list shapes, GitHub's
// Link header and snapshot pages, OpenAI's order and limits, rest cursors, weighted lifecycles.
import { describe, expect, test } from 'vitest';
import { testEngine } from './helpers.js';

describe('github style', () => {
  const config = {
    resources: {
      issues: { style: 'github', path: '/repos/:owner/:repo/issues', fields: { state: 'open', title: '', labels: [] } },
    },
  };

  test("201 with Location, numbers per collection, PATCH merges, PUT replaces, DELETE 204, 404 in GitHub's shape", async () => {
    const t = await testEngine(config);
    const created = await t.call('POST', '/repos/octo/hello/issues', { title: 'Found a bug', labels: ['bug'] });
    expect(created?.status).toBe(201);
    expect(created?.headers.location).toBe('http://127.0.0.1:4010/mock/repos/octo/hello/issues/1');
    expect(created?.json).toEqual({ id: 1, state: 'open', title: 'Found a bug', labels: ['bug'] });
    expect((await t.call('PATCH', '/repos/octo/hello/issues/1', { state: 'closed' }))?.json).toEqual({
      id: 1,
      state: 'closed',
      title: 'Found a bug',
      labels: ['bug'],
    });
    expect((await t.call('PUT', '/repos/octo/hello/issues/1', { title: 'Replaced' }))?.json).toEqual({
      id: 1,
      title: 'Replaced',
    });
    const elsewhere = await t.call('GET', '/repos/octo/other/issues/1');
    expect(elsewhere?.status).toBe(404);
    expect(elsewhere?.body).toBe(
      '{"message":"Not Found","documentation_url":"https://docs.github.com/rest","status":"404"}',
    );
    const gone = await t.call('DELETE', '/repos/octo/hello/issues/1');
    expect([gone?.status, gone?.body, gone?.headers['content-type']]).toEqual([204, '', undefined]);
  });

  test("an action's refusal names the field its when tests, its value and the values it accepts", async () => {
    const t = await testEngine({
      resources: {
        issues: {
          style: 'github',
          path: '/repos/:owner/:repo/issues',
          fields: { state: 'open', title: '', metadata: {} },
          actions: {
            close: { set: { state: 'closed' }, when: { state: 'open' } },
            lock: { set: { locked: true }, when: { state: { in: ['open', 'closed'] }, 'metadata.plan': 'pro' } },
          },
        },
      },
    });
    await t.call('POST', '/repos/octo/hello/issues', { title: 'Found a bug' });
    expect((await t.call('POST', '/repos/octo/hello/issues/1/close'))?.status).toBe(200);
    const again = await t.call('POST', '/repos/octo/hello/issues/1/close');
    expect(again?.status).toBe(400);
    expect(again?.json.message).toBe(
      'You cannot close this issue because it has a state of closed. Only an issue with one of the following state values may be used with close: open.',
    );
    // the field that fails is named, not the first of when
    const lock = await t.call('POST', '/repos/octo/hello/issues/1/lock');
    expect(lock?.json.message).toBe(
      'You cannot lock this issue because it has a metadata.plan of null. Only an issue with one of the following metadata.plan values may be used with lock: pro.',
    );
  });

  test("a body that is not JSON is GitHub's 400, whatever its content type; JSON is read under any type", async () => {
    const t = await testEngine(config);
    const problem =
      '{"message":"Problems parsing JSON","documentation_url":"https://docs.github.com/rest","status":"400"}';
    const form = 'application/x-www-form-urlencoded';
    for (const [body, type] of [
      ['notjson', form],
      ['title=x', form],
      ['{"title":', 'application/json'],
    ] as const) {
      const refused = await t.call('POST', '/repos/octo/hello/issues', body, type);
      expect([refused?.status, refused?.body]).toEqual([400, problem]);
    }
    expect((await t.call('GET', '/repos/octo/hello/issues'))?.json).toEqual([]);
    const made = await t.call('POST', '/repos/octo/hello/issues', '{"title":"sent by curl -d"}', form);
    expect([made?.status, made?.json.title]).toEqual([201, 'sent by curl -d']);
    const patched = await t.call('PATCH', '/repos/octo/hello/issues/1', 'state=closed', form);
    expect([patched?.status, patched?.body]).toEqual([400, problem]);
  });

  test('pages of per_page with a Link header as GitHub writes it; stable when issues are created between reads', async () => {
    const t = await testEngine(config);
    for (let i = 1; i <= 95; i++) await t.call('POST', '/repos/octo/hello/issues', { title: `issue ${i}` });
    await t.call('POST', '/repos/octo/other/issues', { title: 'not this repository' });
    const first = await t.call('GET', '/repos/octo/hello/issues?per_page=30');
    expect(first?.json.map((i: { title: string }) => i.title).slice(0, 2)).toEqual(['issue 95', 'issue 94']);
    expect(first?.headers.link).toBe(
      '<http://127.0.0.1:4010/mock/repos/octo/hello/issues?per_page=30&snapshot=96&page=2>; rel="next", <http://127.0.0.1:4010/mock/repos/octo/hello/issues?per_page=30&snapshot=96&page=4>; rel="last"',
    );
    for (let i = 96; i <= 100; i++) await t.call('POST', '/repos/octo/hello/issues', { title: `issue ${i}` });
    const seen: string[] = first?.json.map((i: { title: string }) => i.title);
    for (let page = 2; page <= 4; page++) {
      const next = await t.call('GET', `/repos/octo/hello/issues?per_page=30&snapshot=96&page=${page}`);
      seen.push(...next?.json.map((i: { title: string }) => i.title));
      if (page === 2) expect(next?.headers.link).toContain('rel="prev", <');
      if (page === 4) expect(next?.headers.link?.endsWith('page=1>; rel="first"')).toBe(true);
    }
    expect(seen).toEqual(Array.from({ length: 95 }, (_, i) => `issue ${95 - i}`));
    expect((await t.call('GET', '/repos/octo/hello/issues?per_page=1000000'))?.json).toHaveLength(100); // GitHub takes at most 100
    expect(
      (await t.call('GET', '/repos/octo/hello/issues?per_page=5&direction=asc'))?.json.map((i: { id: number }) => i.id),
    ).toEqual([1, 2, 3, 4, 5]);
  });
});

describe('openai style', () => {
  const config = {
    resources: {
      files: {
        style: 'openai',
        path: '/v1/files',
        id: 'file-${randomId(24)}',
        fields: {
          object: 'file',
          bytes: 0,
          created_at: '${now.unix}',
          filename: '',
          purpose: 'batch',
          status: 'uploaded',
        },
      },
      batches: {
        style: 'openai',
        path: '/v1/batches',
        id: 'batch_${randomId(24)}',
        fields: { object: 'batch', status: 'validating', input_file_id: null },
        lifecycle: [
          { from: 'validating', after: '1s', to: 'in_progress' },
          { from: 'in_progress', after: '1m', to: { completed: 9, failed: 1 } },
        ],
      },
    },
  };

  test("create 200, list with first_id, last_id, has_more, after; limits in OpenAI's words; delete", async () => {
    const t = await testEngine(config);
    const ids: string[] = [];
    for (let i = 0; i < 5; i++)
      ids.push((await t.call('POST', '/v1/files', { filename: `f${i}.jsonl`, bytes: 10 * i }))?.json.id);
    expect(ids[0]).toMatch(/^file-[0-9A-Za-z]{24}$/);
    const page = await t.call('GET', '/v1/files?limit=2');
    expect(page?.json).toMatchObject({ object: 'list', first_id: ids[4], last_id: ids[3], has_more: true });
    const next = await t.call('GET', `/v1/files?limit=2&after=${ids[3]}`);
    expect(next?.json.data.map((f: { id: string }) => f.id)).toEqual([ids[2], ids[1]]);
    const asc = await t.call('GET', '/v1/files?order=asc&limit=100');
    expect(asc?.json.data.map((f: { id: string }) => f.id)).toEqual(ids);
    expect((await t.call('GET', '/v1/files?limit=1000000'))?.body).toBe(
      '{"error":{"message":"Invalid \'limit\': integer above maximum value. Expected a value <= 100, but got 1000000 instead.","type":"invalid_request_error","param":"limit","code":"integer_above_max_value"}}',
    );
    expect((await t.call('GET', '/v1/files/file-nope'))?.body).toBe(
      '{"error":{"message":"No such file object: file-nope","type":"invalid_request_error","param":null,"code":null}}',
    );
    expect((await t.call('DELETE', `/v1/files/${ids[0]}`))?.json).toEqual({
      id: ids[0],
      object: 'file',
      deleted: true,
    });
  });

  test('a lifecycle with weights: the same seed sends the same objects the same way', async () => {
    const outcomes = async (seed: number): Promise<string[]> => {
      const t = await testEngine(config, { seed });
      const ids: string[] = [];
      for (let i = 0; i < 30; i++)
        ids.push((await t.call('POST', '/v1/batches', { input_file_id: 'file-1' }))?.json.id);
      await t.advance(61_000);
      return Promise.all(ids.map(async (id) => (await t.call('GET', `/v1/batches/${id}`))?.json.status));
    };
    const a = await outcomes(3);
    expect(await outcomes(3)).toEqual(a);
    expect(new Set(a)).toEqual(new Set(['completed', 'failed']));
    expect(a.filter((s) => s === 'completed').length).toBeGreaterThan(20);
  });
});

describe('rest style', () => {
  const config = { resources: { todos: { style: 'rest', path: '/todos', fields: { done: false } } } };

  test("an action whose when does not hold is 400 with the style's error", async () => {
    const t = await testEngine({
      resources: {
        things: {
          style: 'rest',
          path: '/things',
          fields: { status: 'new' },
          actions: { go: { set: { status: 'done' }, when: { status: 'new' } } },
        },
      },
    });
    const id = (await t.call('POST', '/things', {}))?.json.id as string;
    expect((await t.call('POST', `/things/${id}/go`))?.status).toBe(200);
    const again = await t.call('POST', `/things/${id}/go`);
    expect([again?.status, again?.json.error]).toEqual([400, 'thing_unexpected_state']);
  });

  test("an id of the client's own, 409 when taken, items and next cursor, 400 for a bad limit or cursor", async () => {
    const t = await testEngine(config);
    const mine = await t.call('POST', '/todos', { id: 'first', title: 'write tests' });
    expect([mine?.status, mine?.headers.location, mine?.body]).toEqual([
      201,
      'http://127.0.0.1:4010/mock/todos/first',
      '{"id":"first","done":false,"title":"write tests"}',
    ]);
    const taken = await t.call('POST', '/todos', { id: 'first' });
    expect([taken?.status, taken?.body]).toEqual([
      409,
      '{"error":"conflict","message":"A todo with id \'first\' already exists"}',
    ]);
    for (let i = 0; i < 4; i++) await t.call('POST', '/todos', { title: `t${i}` });
    const page = await t.call('GET', '/todos?limit=2');
    expect(page?.json.items.map((i: { title: string }) => i.title)).toEqual(['write tests', 't0']);
    const next = await t.call('GET', `/todos?limit=2&cursor=${page?.json.next}`);
    expect(next?.json.items.map((i: { title: string }) => i.title)).toEqual(['t1', 't2']);
    expect((await t.call('GET', '/todos?limit=1000000'))?.body).toBe(
      '{"error":"bad_request","message":"limit must be a whole number from 1 to 100, got \\"1000000\\"","param":"limit"}',
    );
    expect((await t.call('GET', '/todos?cursor=nope'))?.status).toBe(400);
    expect((await t.call('GET', '/todos/nope'))?.body).toBe(
      '{"error":"not_found","message":"No todo with id \'nope\'"}',
    );
  });

  test('an empty id is refused: a 400 for a request, a config issue for a seed', async () => {
    const t = await testEngine(config);
    const empty = await t.call('POST', '/todos', { id: '', title: 'lost' });
    expect([empty?.status, empty?.body]).toEqual([
      400,
      '{"error":"bad_request","message":"id must not be empty","param":"id"}',
    ]);
    expect((await t.call('GET', '/todos'))?.json.items).toEqual([]);
    await expect(
      testEngine({ resources: { todos: { style: 'rest', path: '/todos', seed: [{ id: '' }] } } }),
    ).rejects.toThrow('resources.todos.seed[0].id must not be empty');
  });
});
