import { mkdtemp, rm, unlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { compileConfig, type CompiledConfig } from '../../src/answer/compile.js';
import { ANSWER_PARTS } from '../../src/answer-parts.js';
import { describeConfigChange } from '../../src/config/diff.js';
import { parseConfig } from '../../src/config/load.js';
import { checkRules } from '../../src/config/rules.js';
import { createIssueList } from '../../src/config/issues.js';
import { objectLocator } from '../../src/config/locate.js';
import type { Config } from '../../src/config/types.js';

// A hot reload of a big config builds, compares and compiles again only the endpoints whose text
// changed: the others are the very objects served before (what keeps a 10,000-endpoint reload fast).

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'mockapi-reload-reuse-'));
  await writeFile(join(dir, 'page.html'), '<p>one</p>');
});
afterAll(() => rm(dir, { recursive: true, force: true }));

const endpoint = (i: number, body = `{id: ${i}}`) =>
  `  - method: GET\n    path: /r${i}\n    response:\n      body: ${body}\n`;
function yaml(options: { changed?: number; limits?: string; extra?: string } = {}): string {
  const endpoints = Array.from({ length: 5 }, (_, i) =>
    endpoint(i, i === options.changed ? `{id: ${i}, changed: true}` : undefined),
  ).join('');
  return `project: reuse\napiKey: mk_reuse_test\n${options.limits ?? ''}endpoints:\n${endpoints}${options.extra ?? ''}`;
}

async function load(text: string, previous?: CompiledConfig): Promise<CompiledConfig> {
  const loaded = await parseConfig(text, join(dir, 'mockapi.yaml'), previous?.config);
  if (!loaded.ok) throw new Error(JSON.stringify(loaded.issues));
  return compileConfig(loaded.config, previous, { parts: ANSWER_PARTS });
}

const same = (a: CompiledConfig, b: CompiledConfig, pick: (c: CompiledConfig) => readonly unknown[]) =>
  pick(a).map((x, i) => x === pick(b)[i]);
const configs = (c: CompiledConfig): Config['endpoints'] => c.config.endpoints;
const compiled = (c: CompiledConfig) => c.endpoints;

describe('a reload that changes one endpoint of five', () => {
  it('keeps the other four as they were built and compiled, and rebuilds the changed one', async () => {
    const before = await load(yaml());
    const after = await load(yaml({ changed: 2 }), before);
    expect(same(before, after, configs)).toEqual([true, true, false, true, true]);
    expect(same(before, after, compiled)).toEqual([true, true, false, true, true]);
    expect(after.endpoints[2]!.body.toString()).toBe('{"id":2,"changed":true}');
    expect(describeConfigChange(before.config, after.config)).toBe(
      'reloaded mockapi.yaml: ~1 endpoint changed (GET /r2)',
    );
  });

  it('a change of the limits compiles every endpoint again (their header lists), but builds none', async () => {
    const before = await load(yaml());
    const after = await load(yaml({ limits: 'limits:\n  rateLimit: {requests: 5, window: 1s}\n' }), before);
    expect(same(before, after, configs)).toEqual([true, true, true, true, true]);
    expect(same(before, after, compiled)).toEqual([false, false, false, false, false]);
    expect(after.endpoints[0]!.rateSlot).toBeGreaterThan(0);
  });

  it('an endpoint that reads a body file, or varies per request, is compiled again', async () => {
    const extra = `  - method: GET\n    path: /page\n    response:\n      bodyFile: page.html\n  - method: GET\n    path: /echo/:id\n    response:\n      body: {id: "\${params.id}"}\n`;
    const before = await load(yaml({ extra }));
    await writeFile(join(dir, 'page.html'), '<p>two</p>');
    const after = await load(yaml({ extra }), before);
    expect(same(before, after, configs)).toEqual([true, true, true, true, true, true, true]);
    expect(same(before, after, compiled)).toEqual([true, true, true, true, true, false, false]);
    expect(after.endpoints[5]!.body.toString()).toBe('<p>two</p>');
  });

  it('data with null in it is built again (JSON cannot tell null from NaN)', async () => {
    const text = yaml({ extra: endpoint(9, '{a: null}') });
    const before = await load(text);
    const after = await load(text.replace('reuse', 'reuse2'), before);
    expect(same(before, after, configs)).toEqual([true, true, true, true, true, false]);
  });
});

describe('the rules on a reload', () => {
  it('skip the endpoint data that passed them before, but still find a duplicate route among it', () => {
    const issues = createIssueList('m.yaml', objectLocator);
    // Data the rules would refuse (a rate above 100%), given as passed before: not checked again.
    const bad = { method: 'GET', path: '/a', failRate: '150%', response: { body: 'x' } };
    const data = { apiKey: 'mk_x', endpoints: [bad, { method: 'get', path: '/a/', response: { body: 'y' } }] };
    checkRules(data, { issues, dir, checked: { texts: new Set([JSON.stringify(bad)]), scenarios: [] } });
    expect(issues.issues.map((i) => i.message)).toEqual([
      expect.stringContaining('(GET /a/) is the same route as endpoints[0] (GET /a)'),
    ]);
    // Without it, the rate is refused.
    const fresh = createIssueList('m.yaml', objectLocator);
    checkRules(data, { issues: fresh, dir });
    expect(fresh.issues.map((i) => i.message)).toEqual([
      expect.stringContaining('percentage from 0% to 100%'),
      expect.stringContaining('is the same route'),
    ]);
  });

  it('check again an endpoint that reads a file (it may be gone), and a new endpoint against the old ones', async () => {
    await writeFile(join(dir, 'gone.html'), '<p>here</p>');
    const extra = `  - method: GET\n    path: /gone\n    response:\n      bodyFile: gone.html\n`;
    const before = await load(yaml({ extra }));
    await unlink(join(dir, 'gone.html'));
    const file = join(dir, 'mockapi.yaml');
    const gone = await parseConfig(yaml({ extra }), file, before.config);
    expect(gone.ok ? [] : gone.issues.map((i) => i.message)).toEqual([expect.stringContaining('gone.html')]);
    const duplicate = await parseConfig(yaml({ extra: endpoint(1, '{again: true}') }), file, before.config);
    expect(duplicate.ok ? [] : duplicate.issues.map((i) => i.message)).toEqual([
      expect.stringContaining('is the same route as endpoints[1]'),
    ]);
  });
});
