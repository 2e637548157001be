// The journal keeps the answer each request got (status, headers, the first 64 KiB of the body),
// redacted like the request's fields: through the real CLI and real HTTP, plus the unit that cuts bodies.
import { beforeAll, describe, expect, it } from 'vitest';
import { keptAnswerBody, JOURNAL_ANSWER_LIMIT, viewAnswer, type AnswerView } from '../../src/control/journal-answer.js';
import { startServe, useTempDir, writeConfig, type ServeProcess } from '../helpers/cli.js';
import { admin, mock } from '../helpers/control.js';

const KEY = 'mk_journalAnswer000000000000000001';
const BIG = 'x'.repeat(70 * 1024);
const CONFIG = `apiKey: ${KEY}
limits:
  rateLimit: { requests: 100, window: 1m }
endpoints:
  - method: GET
    path: /echo
    response:
      status: 202
      headers: { x-echo: "\${query.token}" }
      body: { token: "\${query.token}", name: "\${query.name}" }
  - method: GET
    path: /big
    response:
      body: "${BIG}"
  - method: GET
    path: /empty
    response: { status: 204 }
  - method: GET
    path: /cut
    faults: [{ kind: truncate, rate: 1, bytes: 4 }]
    response: { body: "abcdefgh" }
`;

const dir = useTempDir('mockapi-journal-answer-');
let server: ServeProcess;
beforeAll(async () => {
  const config = await writeConfig(dir.path, CONFIG);
  server = await startServe(['-c', config, '--no-state', '--no-watch', '--log', 'off']);
});

async function lastEntry(): Promise<any> {
  const { body } = await admin(server.url, 'GET', 'requests?limit=1');
  return body.requests[0];
}

describe('the answer in the journal', () => {
  it('keeps the status, headers and body written, the key redacted wherever it appears', async () => {
    const sent = await mock(server.url, 'GET', `/mock/echo?token=${KEY}&name=Ada`, { headers: { 'x-api-key': KEY } });
    expect(sent.status).toBe(202);
    const entry = await lastEntry();
    expect(entry.status).toBe(202);
    expect(entry.responseBody).toBe(JSON.stringify({ token: '<redacted>', name: 'Ada' }));
    expect(entry.responseBodyTruncated).toBe(false);
    expect(entry.responseHeaders).toMatchObject({
      'content-type': 'application/json; charset=utf-8',
      'x-echo': '<redacted>',
      'content-length': String(Buffer.byteLength(sent.text)),
    });
    expect(JSON.stringify(entry)).not.toContain(KEY);
  });

  it('keeps the headers each answer was written with, though a fixed answer reuses its header list', async () => {
    const first = await mock(server.url, 'GET', '/mock/empty', { headers: { 'x-api-key': KEY } });
    const second = await mock(server.url, 'GET', '/mock/empty', { headers: { 'x-api-key': KEY } });
    expect(first.headers['ratelimit-remaining']).not.toBe(second.headers['ratelimit-remaining']);
    const { body } = await admin(server.url, 'GET', 'requests?limit=2');
    expect(body.requests.map((e: any) => e.responseHeaders['ratelimit-remaining'])).toEqual([
      first.headers['ratelimit-remaining'],
      second.headers['ratelimit-remaining'],
    ]);
  });

  it('keeps the first 64 KiB of a larger body, flagged responseBodyTruncated', async () => {
    expect((await mock(server.url, 'GET', '/mock/big', { headers: { 'x-api-key': KEY } })).text).toHaveLength(
      BIG.length,
    );
    const entry = await lastEntry();
    expect(entry.responseBody).toBe(BIG.slice(0, 64 * 1024));
    expect(entry.responseBodyTruncated).toBe(true);
    expect(entry.responseHeaders['content-length']).toBe(String(BIG.length));
  });

  it('has no body for an answer that sends none (a 401 has its JSON error)', async () => {
    await mock(server.url, 'GET', '/mock/empty', { headers: { 'x-api-key': KEY } });
    expect(await lastEntry()).toMatchObject({ status: 204, responseBody: '', responseBodyTruncated: false });
    await mock(server.url, 'HEAD', '/mock/echo?name=x', { headers: { 'x-api-key': KEY } });
    expect(await lastEntry()).toMatchObject({ method: 'HEAD', status: 202, responseBody: '' });
    await mock(server.url, 'GET', '/mock/echo');
    const refused = await lastEntry();
    expect(refused).toMatchObject({ status: 401, step: 'auth', responseBodyTruncated: false });
    expect(JSON.parse(refused.responseBody)).toMatchObject({ error: expect.any(String) });
  });
});

describe('a fault', () => {
  it('journals the answer the request was given, with the note of what the fault did to it', async () => {
    await fetch(`${server.mock}/cut`, { headers: { 'x-api-key': KEY } })
      .then((res) => res.text())
      .catch(() => undefined);
    const entry = await lastEntry();
    expect(entry).toMatchObject({
      path: '/mock/cut',
      step: 'fault',
      status: 200,
      responseBody: 'abcdefgh',
      responseBodyTruncated: false,
    });
    expect(entry.notes.join(' ')).toContain('truncate');
  });
});

describe('keptAnswerBody', () => {
  it('keeps a body within the limit by reference, and a copy of the first 64 KiB of a larger one', () => {
    const small = Buffer.alloc(JOURNAL_ANSWER_LIMIT, 1);
    expect(keptAnswerBody(small)).toBe(small);
    const large = Buffer.alloc(JOURNAL_ANSWER_LIMIT + 1, 2);
    const head = keptAnswerBody(large) as Buffer;
    expect(head.length).toBe(JOURNAL_ANSWER_LIMIT);
    expect(head.buffer).not.toBe(large.buffer); // the large body is not kept alive by its head
    expect(keptAnswerBody(large)).toBe(head); // a fixed body is cut once
    expect(keptAnswerBody('é'.repeat(JOURNAL_ANSWER_LIMIT / 2))).toBe('é'.repeat(JOURNAL_ANSWER_LIMIT / 2));
    const text = 'é'.repeat(JOURNAL_ANSWER_LIMIT / 2 + 1);
    expect(Buffer.from(keptAnswerBody(text) as Buffer).toString()).toBe('é'.repeat(JOURNAL_ANSWER_LIMIT / 2));
    expect(keptAnswerBody(undefined)).toBeUndefined();
  });

  it('keeps a large rendered text body as a head of its own: the whole body is not held by the entry', () => {
    const rendered = 'x'.repeat(8 * 1024 * 1024); // a body rendered per request, as text
    const head = keptAnswerBody(rendered) as Buffer;
    expect(head.toString()).toBe('x'.repeat(JOURNAL_ANSWER_LIMIT));
    // A view of the whole body's bytes would keep 8 MiB alive per journal entry.
    expect(head.buffer.byteLength).toBeLessThanOrEqual(JOURNAL_ANSWER_LIMIT);
    const wide = keptAnswerBody('€'.repeat(JOURNAL_ANSWER_LIMIT)) as Buffer;
    expect(wide.toString()).toBe('€'.repeat(Math.floor(JOURNAL_ANSWER_LIMIT / 3))); // whole characters only
    expect(wide.buffer.byteLength).toBeLessThanOrEqual(JOURNAL_ANSWER_LIMIT);
  });

  it('views repeated headers joined, and the key scrubbed', () => {
    const scrub = (t: string) => t.split('k3y').join('<redacted>');
    const view = {} as AnswerView;
    viewAnswer(view, 'GET', 200, ['Set-Cookie', 'a=1', 'set-cookie', 'b=k3y'], 'k3y!', false, scrub);
    expect(view).toEqual({
      responseHeaders: { 'set-cookie': 'a=1, b=<redacted>' },
      responseBody: '<redacted>!',
      responseBodyTruncated: false,
    });
  });
});
