// Resources proved by @octokit/rest (paginate over 95 issues gets 95, in order, with issues created
// while it pages) and openai (auto-pagination over files; a batch whose lifecycle completes on the
// virtual clock), each against the built CLI on port 0.
import { Octokit } from '@octokit/rest';
import OpenAI from 'openai';
import { afterAll, describe, expect, test } from 'vitest';
import { startServe, stopAll, tempDir, writeConfig } from '../../helpers/cli.js';
import { admin } from '../../helpers/control.js';

afterAll(stopAll);

describe('@octokit/rest against a github-style resource', () => {
  test('octokit.paginate over 95 issues gets 95, newest first, each once — also when issues are created between pages', async () => {
    const dir = await tempDir();
    const file = await writeConfig(
      dir,
      `apiKey: ghp_resourcesOctokit0000000000000000001
server:
  basePath: /
auth:
  accept: [{ scheme: token }, bearer]
resources:
  issues:
    style: github
    path: /repos/:owner/:repo/issues
    fields: { state: open, title: "", body: null, labels: [] }
`,
    );
    const server = await startServe(['-c', file], { cwd: dir });
    const octokit = new Octokit({
      auth: 'ghp_resourcesOctokit0000000000000000001',
      baseUrl: server.url,
      log: { debug() {}, info() {}, warn() {}, error() {} },
    });
    for (let i = 1; i <= 95; i++)
      await octokit.rest.issues.create({ owner: 'octo', repo: 'hello', title: `issue ${i}` });
    await octokit.rest.issues.create({ owner: 'octo', repo: 'other', title: 'another repository' });
    const created = await octokit.rest.issues.create({ owner: 'octo', repo: 'hello', title: 'issue 96' });
    expect(created.status).toBe(201);
    expect(created.headers.location).toBe(`${server.url}/repos/octo/hello/issues/97`);
    await octokit.rest.issues.update({ owner: 'octo', repo: 'hello', issue_number: 97, state: 'closed' });

    const titles: string[] = [];
    let pages = 0;
    for await (const page of octokit.paginate.iterator(octokit.rest.issues.listForRepo, {
      owner: 'octo',
      repo: 'hello',
      per_page: 30,
      state: 'open',
    })) {
      titles.push(...page.data.map((issue) => issue.title));
      // created while paging: the pages that follow are cut from the same issues
      if (pages++ === 0) await octokit.rest.issues.create({ owner: 'octo', repo: 'hello', title: 'late' });
    }
    expect(pages).toBe(4);
    expect(titles).toEqual(Array.from({ length: 95 }, (_, i) => `issue ${95 - i}`));
    const all = await octokit.paginate(octokit.rest.issues.listForRepo, {
      owner: 'octo',
      repo: 'hello',
      state: 'all',
      per_page: 100,
    });
    expect(all).toHaveLength(97);
    const missing = await octokit.rest.issues
      .get({ owner: 'octo', repo: 'hello', issue_number: 500 })
      .catch((e: unknown) => e);
    expect(missing).toMatchObject({ status: 404, message: expect.stringContaining('Not Found') });
  });
});

describe('openai against openai-style resources', () => {
  test('files listed with auto-pagination; a batch retrieved after its lifecycle completed', async () => {
    const dir = await tempDir();
    const file = await writeConfig(
      dir,
      `apiKey: sk-proj-resourcesOpenai000000000000000001
server:
  basePath: /
auth:
  accept: [bearer]
resources:
  files:
    style: openai
    path: /v1/files
    id: "file-\${randomId(24)}"
    fields: { object: file, bytes: 0, created_at: "\${now.unix}", filename: upload.jsonl, purpose: batch, status: processed }
  batches:
    style: openai
    path: /v1/batches
    id: "batch_\${randomId(24)}"
    fields: { object: batch, endpoint: /v1/chat/completions, status: validating, input_file_id: null, completion_window: 24h, created_at: "\${now.unix}", completed_at: null }
    actions:
      cancel: { set: { status: cancelling }, when: { status: { in: [validating, in_progress] } } }
    lifecycle:
      - { from: validating, after: 1s, to: in_progress }
      - { from: in_progress, after: 10m, to: completed, set: { completed_at: "\${now.unix}" } }
      - { from: cancelling, after: 1s, to: cancelled }
`,
    );
    const server = await startServe(['-c', file, '--clock', '2026-01-01T00:00:00Z'], { cwd: dir });
    const openai = new OpenAI({
      apiKey: 'sk-proj-resourcesOpenai000000000000000001',
      baseURL: `${server.url}/v1`,
      maxRetries: 0,
    });
    // Files are made without an upload (a multipart body is beyond a collection): the admin API adds them.
    for (let i = 0; i < 45; i++)
      expect(
        (await admin(server.url, 'POST', 'resources/files', { filename: `part-${i}.jsonl`, bytes: 100 + i })).status,
      ).toBe(200);
    const names: string[] = [];
    for await (const f of openai.files.list({ limit: 20 })) names.push(f.filename);
    expect(names).toEqual(Array.from({ length: 45 }, (_, i) => `part-${44 - i}.jsonl`));
    const input = (await openai.files.list({ limit: 1 })).data[0]!;

    const batch = await openai.batches.create({
      input_file_id: input.id,
      endpoint: '/v1/chat/completions',
      completion_window: '24h',
    });
    expect(batch).toMatchObject({ object: 'batch', status: 'validating', input_file_id: input.id });
    expect(batch.id).toMatch(/^batch_[0-9A-Za-z]{24}$/);
    const doomed = await openai.batches.create({
      input_file_id: input.id,
      endpoint: '/v1/chat/completions',
      completion_window: '24h',
    });
    expect((await openai.batches.cancel(doomed.id)).status).toBe('cancelling');
    await admin(server.url, 'POST', 'clock', { advance: '1s' });
    expect((await openai.batches.retrieve(batch.id)).status).toBe('in_progress');
    expect((await openai.batches.retrieve(doomed.id)).status).toBe('cancelled');
    await admin(server.url, 'POST', 'clock', { advance: '10m' });
    const done = await openai.batches.retrieve(batch.id);
    expect(done.status).toBe('completed');
    // The virtual clock runs on in real time from its start, so the batch was made some time after
    // 00:00:00 (more on a loaded machine): it completed exactly 1 s + 10 min after it was made.
    expect(batch.created_at).toBeGreaterThanOrEqual(Date.parse('2026-01-01T00:00:00Z') / 1000);
    expect(done.completed_at).toBe(batch.created_at + 601);
    const listed = [];
    for await (const b of openai.batches.list()) listed.push([b.id, b.status]);
    expect(listed).toEqual([
      [doomed.id, 'cancelled'],
      [batch.id, 'completed'],
    ]);
    const refused = await openai.batches.cancel(batch.id).catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(OpenAI.BadRequestError);
    expect((refused as InstanceType<typeof OpenAI.BadRequestError>).code).toBe('batch_unexpected_state');
    const missing = await openai.files.retrieve('file-nope').catch((e: unknown) => e);
    expect(missing).toBeInstanceOf(OpenAI.NotFoundError);
  });
});
