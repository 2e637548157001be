// Unit tests of the recording's inference, redaction and write: templates from evidence, folding
// into responses and sequences, secret shapes, the auth value rule, a save during the write.
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { inferEndpoints } from '../../src/record/infer.js';
import type { RecordedExchange } from '../../src/record/exchange.js';
import { createScrubber } from '../../src/record/scrub.js';
import { inferTemplates, segmentShape } from '../../src/record/templates.js';
import { writeRecording } from '../../src/record/write.js';
import { findSecretShapes } from '../../src/redact/secret-shapes.js';
import { authValueProblem, resolveAuthValue } from '../../src/config/auth-value.js';

const templatesOf = (paths: string[], known: Array<[string, 'endpoint' | 'openapi']> = []) =>
  Object.fromEntries([...inferTemplates(paths, known)].map(([p, c]) => [p, c.template]));

describe('path templates', () => {
  it('reads id-shaped segments as parameters', () => {
    expect(templatesOf(['/users/42', '/users/43'])).toEqual({ '/users/42': '/users/:id', '/users/43': '/users/:id' });
    expect(templatesOf(['/users/42/orders/ord_8f7e6d5c'])).toEqual({
      '/users/42/orders/ord_8f7e6d5c': '/users/:userId/orders/:id',
    });
    for (const s of [
      '42',
      '3fa85f64-5717-4562-b3fc-2c963f66afa6',
      '2026-11-25',
      'cus_9s8d7f6g5h',
      'a1b2c3d4e5f6a7b8',
      'Zx81kLm0Qp93Rt7Ws2Yv',
    ])
      expect({ s, shape: segmentShape(s) !== undefined }).toEqual({ s, shape: true });
    for (const s of ['users', 'me', 'v1', 'search', 'health-check', 'snake_case'])
      expect({ s, shape: segmentShape(s) }).toEqual({ s, shape: undefined });
  });

  it('reads plain words as a parameter only with at least 4 values and no literal sibling', () => {
    expect(templatesOf(['/repos/alpha', '/repos/beta', '/repos/gamma'])).toEqual({
      '/repos/alpha': '/repos/alpha',
      '/repos/beta': '/repos/beta',
      '/repos/gamma': '/repos/gamma',
    });
    const four = templatesOf(['/repos/alpha', '/repos/beta', '/repos/gamma', '/repos/delta']);
    expect(new Set(Object.values(four))).toEqual(new Set(['/repos/:id']));
    const sibling = templatesOf(
      ['/repos/alpha', '/repos/beta', '/repos/gamma', '/repos/delta'],
      [['/repos/new', 'endpoint']],
    );
    expect(new Set(Object.values(sibling))).toEqual(
      new Set(['/repos/alpha', '/repos/beta', '/repos/gamma', '/repos/delta']),
    );
  });

  it('takes the template of an existing endpoint or an OpenAPI path first', () => {
    expect(templatesOf(['/users/me', '/users/42'], [['/users/:userId', 'endpoint']])).toEqual({
      '/users/me': '/users/:userId',
      '/users/42': '/users/:userId',
    });
    expect(templatesOf(['/pets/rex'], [['/pets/:petId', 'openapi']])).toEqual({ '/pets/rex': '/pets/:petId' });
  });
});

let seq = 0;
function ex(path: string, status: number, body: unknown, extra: Partial<RecordedExchange> = {}): RecordedExchange {
  const text = typeof body === 'string' ? body : JSON.stringify(body);
  return {
    seq: seq++,
    method: 'GET',
    path,
    query: {},
    requestHeaders: {},
    status,
    responseHeaders: [['content-type', typeof body === 'string' ? 'text/plain' : 'application/json']],
    responseBody: Buffer.from(text),
    ...extra,
  };
}
const infer = (list: RecordedExchange[], capture: string[] = []) =>
  inferEndpoints(list, {
    endpoints: [],
    openapi: [],
    captureRequestHeaders: capture,
    keepResponseHeaders: [],
    scrub: createScrubber(['mk_key_for_unit_tests'], undefined),
  });

describe('folding', () => {
  it('folds reflected values into one answer', () => {
    const { endpoints } = infer([
      ex('/users/1', 200, { id: 1, login: 'u' }),
      ex('/users/2', 200, { id: 2, login: 'u' }),
    ]);
    expect(endpoints.map((e) => [e.key, e.answer])).toEqual([
      [
        'GET /users/:id',
        {
          response: {
            status: 200,
            headers: { 'content-type': 'application/json' },
            body: { id: '${int(params.id)}', login: 'u' },
          },
        },
      ],
    ]);
  });

  it('splits variations by the smallest discriminating when, the most frequent answer last without when', () => {
    const { endpoints } = infer([
      ex('/items', 200, { n: 1 }, { query: { page: '1', sort: 'a' } }),
      ex('/items', 200, { n: 2 }, { query: { page: '2', sort: 'a' } }),
      ex('/items', 200, { n: 1 }, { query: { page: '1', sort: 'b' } }),
    ]);
    const answer = endpoints[0]!.answer as { responses: Array<Record<string, unknown>> };
    expect(answer.responses.map((r) => [r.when, (r.body as { n: number }).n])).toEqual([
      [{ 'query.page': '2' }, 2],
      [undefined, 1],
    ]);
  });

  it('uses a captured request header when only it tells answers apart', () => {
    const list = [
      ex('/me', 200, { lang: 'en' }, { requestHeaders: { 'accept-language': 'en' } }),
      ex('/me', 200, { lang: 'fr' }, { requestHeaders: { 'accept-language': 'fr' } }),
    ];
    expect(
      (infer(list, ['accept-language']).endpoints[0]!.answer as { responses: Array<{ when?: object }> }).responses[0]!
        .when,
    ).toEqual({ 'headers.accept-language': 'fr' });
    // Not captured: the same request got different answers over time, a sequence.
    expect(Object.keys(infer(list).endpoints[0]!.answer)).toEqual(['sequence']);
  });

  it('tells POST answers apart by a field of the JSON request body, keeping its JSON type', () => {
    const post = (kind: unknown, status: number) =>
      ex(
        '/payments',
        status,
        { status },
        { method: 'POST', requestBody: Buffer.from(JSON.stringify({ amount: 5, kind })) },
      );
    const { endpoints } = infer([post('card', 201), post('card', 201), post(7, 402)]);
    const answer = endpoints[0]!.answer as { responses: Array<{ when?: object; status: number }> };
    expect(answer.responses.map((r) => [r.when, r.status])).toEqual([
      [{ 'body.kind': 7 }, 402],
      [undefined, 201],
    ]);
  });

  it('never puts a secret, or a field named like one, into a when', () => {
    const byToken = [
      ex('/feed', 200, { n: 1 }, { query: { token: 'abc123' } }),
      ex('/feed', 200, { n: 2 }, { query: { token: 'def456' } }),
    ];
    expect(Object.keys(infer(byToken).endpoints[0]!.answer)).toEqual(['sequence']);
    const byJwt = [
      ex('/feed', 200, { n: 1 }, { query: { cursor: 'eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.sig' } }),
      ex('/feed', 200, { n: 2 }, { query: { cursor: 'plain' } }),
    ];
    expect(Object.keys(infer(byJwt).endpoints[0]!.answer)).toEqual(['sequence']);
  });

  it('turns polling (202, 202, 200) into a sequence with times', () => {
    const { endpoints } = infer([
      ex('/jobs/9', 202, { s: 'run' }),
      ex('/jobs/9', 202, { s: 'run' }),
      ex('/jobs/9', 200, { s: 'done' }),
    ]);
    expect(endpoints[0]!.answer).toEqual({
      sequence: [
        { times: 2, status: 202, headers: { 'content-type': 'application/json' }, body: { s: 'run' } },
        { status: 200, headers: { 'content-type': 'application/json' }, body: { s: 'done' } },
      ],
    });
  });

  it('escapes ${ in recorded text and keeps non-canonical JSON as text for a byte-identical replay', () => {
    const { endpoints } = infer([
      ex('/t', 200, 'a ${x} b'),
      ex('/j', 200, '{ "spaced": true }', { responseHeaders: [['content-type', 'application/json']] }),
    ]);
    expect(endpoints.map((e) => (e.answer.response as { body: unknown }).body)).toEqual([
      'a $${x} b',
      '{ "spaced": true }',
    ]);
  });
});

describe('redacting recorded JSON', () => {
  it('redacts text under fields named like secrets and the fields the user names, and keeps counters', () => {
    const scrub = createScrubber(['mk_key_for_unit_tests'], {
      captureRequestHeaders: [],
      keepResponseHeaders: [],
      redactFields: ['Email'],
      redactPatterns: ['acct_[0-9]{4}'],
      recordRefusals: false,
      recordNotFound: false,
    });
    expect(
      scrub.json({
        password: 'p',
        pin: 1234,
        tokens_used: 5,
        access_token: 'abc',
        email: 'a@b.c',
        note: 'acct_1234 and mk_key_for_unit_tests',
        nested: [{ client_secret: 's' }],
        ok: true,
      }),
    ).toEqual({
      password: '<redacted>',
      pin: '<redacted>',
      tokens_used: 5,
      access_token: '<redacted>',
      email: '<redacted>',
      note: '<redacted> and <redacted>',
      nested: [{ client_secret: '<redacted>' }],
      ok: true,
    });
  });
});

describe('secret shapes and the auth value', () => {
  it('finds the known shapes and nothing in ordinary text', () => {
    const text =
      'a eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.sig b sk_live_51HxYzAbCdEfGhIjKl c AKIAIOSFODNN7EXAMPLE d -----BEGIN PRIVATE KEY-----\nabc\n-----END PRIVATE KEY-----';
    expect(findSecretShapes(text).map((h) => h.name)).toEqual([
      'a JWT',
      'a Stripe key',
      'an AWS access key',
      'a PEM private key',
    ]);
    expect(findSecretShapes('user 42 ordered sku_123 at 2026-11-25; see https://example.com/sk-docs')).toEqual([]);
  });

  it('accepts only MOCKAPI_* references after an optional scheme word', () => {
    expect(authValueProblem('Bearer ${env.MOCKAPI_K}')).toBeUndefined();
    expect(authValueProblem('${env.MOCKAPI_K}')).toBeUndefined();
    expect(authValueProblem('Bearer sk_live_abc')).toMatch(/must take the credential from the environment/);
    expect(authValueProblem('Bearer abc${env.MOCKAPI_K}')).toMatch(/may hold only/);
    expect(authValueProblem('${env.AWS_SECRET}')).toMatch(/named MOCKAPI_\*, got AWS_SECRET/);
    expect(resolveAuthValue('Bearer ${env.MOCKAPI_K}', { MOCKAPI_K: 's3' })).toEqual({
      value: 'Bearer s3',
      secrets: ['s3'],
      missing: [],
    });
    expect(resolveAuthValue('Bearer ${env.MOCKAPI_K}', {}).missing).toEqual(['MOCKAPI_K']);
  });
});

describe('writing a recording', () => {
  it('keeps an edit saved while the recording is written: it merges again into the newest bytes', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'mockapi-record-unit-'));
    try {
      const file = join(dir, 'mockapi.yaml');
      await writeFile(file, 'apiKey: mk_key_for_unit_tests\nendpoints:\n  - method: GET\n    path: /mine\n');
      let saves = 0;
      const outcome = await writeRecording({
        config: file,
        exchanges: [ex('/recorded', 200, { ok: true })],
        env: {},
        beforeCommit: async () => {
          if (saves++ > 0) return;
          const text = await readFile(file, 'utf8');
          await writeFile(file, text.replace('apiKey:', '# saved by someone else meanwhile\napiKey:'));
        },
      });
      expect(outcome.code).toBe(0);
      const written = await readFile(file, 'utf8');
      expect(written).toContain('# saved by someone else meanwhile');
      expect(written).toContain('recorded: GET /recorded');
      expect(saves).toBe(2);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});

describe('recorded event streams', () => {
  it('reads events as an SSE client does, keeping comments and leaving out an unfinished event', async () => {
    const { parseEventStream, streamOf } = await import('../../src/record/sse-leaf.js');
    expect(
      parseEventStream('\uFEFFretry: 10\ndata: a\ndata\n\n:keep\nevent: x\n\nid: bad\0id\ndata: b\n\ndata: cut off\n'),
    ).toEqual([{ data: 'a\n' }, { comment: 'keep', event: 'x' }, { data: 'b' }]);
    const scrub = createScrubber(['sekret-value-123'], undefined);
    expect(streamOf('data: {"token":"t1","n":1}\n\ndata: has sekret-value-123\n\n', scrub)).toEqual({
      format: 'sse',
      events: [{ data: '{"token":"<redacted>","n":1}' }, { data: 'has <redacted>' }],
    });
    expect(streamOf(': only a partial line', scrub)).toBeUndefined();
  });
});
