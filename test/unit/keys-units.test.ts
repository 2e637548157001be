// Unit tests of the parts of keys and plans: the key matcher, the redactor, state file names,
// the headers of the window closest to full, and replacing one named key in YAML.
import { describe, expect, test } from 'vitest';
import { checkAuth, createKeyMatcher } from '../../src/pipeline/auth.js';
import { checkAccepted } from '../../src/pipeline/auth-accept.js';
import type { AuthSource } from '../../src/config/types.js';
import { createRedactor } from '../../src/redact/redactor.js';
import { keyStateFile } from '../../src/state/state-file.js';
import { closestToFull, endpointRefusal } from '../../src/pipeline/key-limits.js';
import { createRateLimiter } from '../../src/pipeline/rate-limit.js';
import { replaceNamedKey } from '../../src/config/replace-named-key.js';

const basic = (user: string) => `Basic ${Buffer.from(`${user}:`).toString('base64')}`;

describe('key matcher with several keys', () => {
  const matcher = createKeyMatcher('mk_default', [
    { name: 'ci', key: 'sk_ci_123' },
    { name: 'web', key: 'sk_web_456' },
  ]);
  test('apiKey is ok, a key of keys: is its named verdict, in every credential form', () => {
    expect(checkAuth({ 'x-api-key': 'mk_default' }, matcher)).toBe('ok');
    expect(checkAuth({ 'x-api-key': 'sk_ci_123' }, matcher)).toMatchObject({ name: 'ci', index: 0 });
    expect(checkAuth({ authorization: 'Bearer sk_web_456' }, matcher)).toMatchObject({ name: 'web', index: 1 });
    expect(checkAuth({ authorization: basic('sk_ci_123') }, matcher)).toMatchObject({ name: 'ci', index: 0 });
    // The same verdict object every time: a request allocates nothing for it.
    expect(checkAuth({ 'x-api-key': 'sk_ci_123' }, matcher)).toBe(
      checkAuth({ authorization: 'Bearer sk_ci_123' }, matcher),
    );
  });
  test('anything else is invalid or missing as before', () => {
    expect(checkAuth({ 'x-api-key': 'sk_ci_12' }, matcher)).toBe('invalid');
    expect(checkAuth({ authorization: 'Bearer ' }, matcher)).toBe('missing');
    expect(checkAuth({}, createKeyMatcher('mk_default'))).toBe('missing');
    expect(checkAuth({ 'x-api-key': 'sk_ci_123' }, createKeyMatcher('mk_default'))).toBe('invalid');
    expect(createKeyMatcher('mk_default', []).named).toBeUndefined();
  });
  test('with auth.accept, a key of keys: is its named verdict in every listed place, and nowhere else', () => {
    const accept: AuthSource[] = [
      { kind: 'query', name: 'api_key' },
      { kind: 'scheme', name: 'Token' },
    ];
    const m = createKeyMatcher('mk_default', [{ name: 'ci', key: 'sk_ci_123' }], accept);
    expect(m.accept).toBe(accept);
    const req = (url: string, headers: Record<string, string> = {}) => ({
      url,
      headers,
      rawHeaders: Object.entries(headers).flat(),
    });
    expect(checkAccepted(accept, req('/mock/a?api_key=sk_ci_123'), m)).toMatchObject({ name: 'ci', index: 0 });
    expect(checkAccepted(accept, req('/mock/a', { authorization: 'token sk_ci_123' }), m)).toMatchObject({
      name: 'ci',
      index: 0,
    });
    expect(checkAccepted(accept, req('/mock/a?api_key=mk_default'), m)).toBe('ok');
    expect(checkAccepted(accept, req('/mock/a?api_key=sk_ci_12'), m)).toBe('invalid');
    expect(checkAccepted(accept, req('/mock/a', { 'x-api-key': 'sk_ci_123' }), m)).toBe('missing');
  });
});

describe('the one redactor knows every key', () => {
  test('every key of keys: is scrubbed, and the ones rotations replaced stay scrubbed', () => {
    const first = createRedactor(['mk_default_key', 'sk_ci_key_one']);
    expect(first.scrub('a=mk_default_key&b=sk_ci_key_one')).toBe('a=<redacted>&b=<redacted>');
    expect(first.rotated('mk_default_key', ['sk_ci_key_one'])).toBe(first);
    const second = first.rotated('mk_default_key', ['sk_ci_key_two']);
    expect(second.scrub('sk_ci_key_one sk_ci_key_two mk_default_key')).toBe('<redacted> <redacted> <redacted>');
    const third = second.rotated('mk_default_key', ['sk_ci_key_three']);
    expect(third.scrub('sk_ci_key_two sk_ci_key_three')).toBe('<redacted> <redacted>');
    // A key replaced two rotations ago is still a secret.
    expect(third.scrub('sk_ci_key_one')).toBe('<redacted>');
  });
  test("auth.accept's places survive a rotation, and the keys survive a change of places", () => {
    const first = createRedactor(['mk_default_key', 'sk_ci_key_one']).withPlaces({
      headers: ['X-Shop-Token'],
      query: ['api_key'],
    });
    const rotated = first.rotated('mk_default_key', ['sk_ci_key_two']);
    expect([rotated.isSecretHeader('x-shop-token'), rotated.isSecretQuery('api_key')]).toEqual([true, true]);
    expect(rotated.scrub('sk_ci_key_one sk_ci_key_two')).toBe('<redacted> <redacted>');
    const moved = rotated.withPlaces({ query: ['token'] });
    expect([
      moved.isSecretHeader('x-shop-token'),
      moved.isSecretQuery('api_key'),
      moved.isSecretQuery('token'),
    ]).toEqual([false, false, true]);
    expect(moved.scrub('sk_ci_key_one sk_ci_key_two mk_default_key')).toBe('<redacted> <redacted> <redacted>');
    // The keys served now are still the ones a rotation keeps: unchanged keys give the same redactor.
    expect(moved.rotated('mk_default_key', ['sk_ci_key_two'])).toBe(moved);
  });
});

test('each key of keys: has a state file named by its name beside the state file', () => {
  expect(keyStateFile('/p/.mockapi/state.json', 'ci')).toBe('/p/.mockapi/state.key-ci.json');
  expect(keyStateFile('/p/usage', 'ci')).toBe('/p/usage.key-ci');
  expect(keyStateFile('/p.d/usage', 'ci')).toBe('/p.d/usage.key-ci');
  expect(keyStateFile('/p/.usage', 'ci')).toBe('/p/.usage.key-ci');
});

describe('endpoint windows', () => {
  test('a full endpoint window refuses with its own headers; the headers describe the window closest to full', () => {
    const limiter = createRateLimiter();
    const window = { requests: 1, windowMs: 60_000 };
    expect(endpointRefusal(limiter, window, 1000)).toBeUndefined();
    limiter.record(1000);
    expect(endpointRefusal(limiter, window, 2000)).toEqual({
      outcome: 'rate_limited',
      rate: { limit: 1, remaining: 0, resetSeconds: 59, admitted: false, retryAfterSeconds: 59 },
      retryAfterSeconds: 59,
    });
    const plan = {
      outcome: 'admitted' as const,
      rate: { limit: 100, remaining: 90, resetSeconds: 1 },
      retryAfterSeconds: 0,
    };
    expect(closestToFull(plan, { limit: 30, remaining: 3, resetSeconds: 40 }).rate).toEqual({
      limit: 30,
      remaining: 3,
      resetSeconds: 40,
    });
    expect(closestToFull(plan, { limit: 300, remaining: 200, resetSeconds: 40 })).toBe(plan);
    expect(closestToFull({ ...plan, rate: undefined }, { limit: 3, remaining: 2, resetSeconds: 4 }).rate).toEqual({
      limit: 3,
      remaining: 2,
      resetSeconds: 4,
    });
  });
});

describe('replacing one named key', () => {
  test('only the value of that key changes, in block and flow style, quoting kept', () => {
    const block =
      "# top\napiKey: mk_a\nkeys:\n  - name: ci   # the CI job\n    key: 'sk_old'\n  - name: web\n    key: sk_web\n";
    const out = replaceNamedKey(block, 'ci', 'sk_new');
    expect(out).toEqual({ ok: true, text: block.replace("'sk_old'", "'sk_new'") });
    const flow = 'apiKey: mk_a\nkeys: [{ name: web, key: sk_web }, { key: "sk_old", name: ci }]\n';
    expect(replaceNamedKey(flow, 'ci', 'sk_new')).toEqual({ ok: true, text: flow.replace('"sk_old"', '"sk_new"') });
  });
  test('refused when the name is not there, or is there twice', () => {
    expect(replaceNamedKey('apiKey: a\nkeys:\n  - name: web\n    key: b\n', 'ci', 'x')).toEqual({
      ok: false,
      reason: 'keys lists no key named "ci"',
    });
    expect(replaceNamedKey('apiKey: a\n', 'ci', 'x')).toEqual({
      ok: false,
      reason: 'there is no top-level keys: list',
    });
    expect(
      replaceNamedKey('apiKey: a\nkeys:\n  - { name: ci, key: b }\n  - { name: ci, key: c }\n', 'ci', 'x'),
    ).toEqual({ ok: false, reason: 'keys lists 2 keys named "ci"' });
  });
});

describe('rotate-key --name against a save made while it runs', () => {
  const config =
    '# shop\napiKey: mk_default\nkeys:\n  - name: ci\n    key: sk_ci_old   # CI\n  - name: web\n    key: sk_web\n';
  test('the save is kept and the named key is applied to it; nothing else changes', async () => {
    const { mkdtemp, readFile, writeFile, rm } = await import('node:fs/promises');
    const { tmpdir } = await import('node:os');
    const { join } = await import('node:path');
    const { rotateIn } = await import('../helpers/rotate.js');
    const dir = await mkdtemp(join(tmpdir(), 'mockapi-keys-rotate-'));
    const file = join(dir, 'mockapi.yaml');
    await writeFile(file, config);
    const edited = `${config}# saved by the editor\n`;
    let saved = false;
    const result = await rotateIn(
      file,
      { key: 'sk_ci_new', name: 'ci' },
      {
        hooks: {
          beforeSwap: async () => {
            if (!saved) await writeFile(file, edited);
            saved = true;
          },
        },
      },
    );
    expect(result.code).toBe(0);
    expect(result.out).toEqual(['sk_ci_new']);
    expect(await readFile(file, 'utf8')).toBe(edited.replace('sk_ci_old', 'sk_ci_new'));
    expect(result.err).toEqual([
      `note: ${file} was saved by someone else while the key was rotated; the new key was applied to the newest version`,
      `rotated key ci in ${file}; no running servers`,
    ]);
    // A key already used by another key is refused, the file left as it was.
    const clash = await rotateIn(file, { key: 'sk_web', name: 'ci' });
    expect(clash.code).toBe(1);
    expect(clash.err.join('\n')).toContain('keys[1].key is the same key as keys[0]; each key must be different');
    expect(clash.err.join('\n')).not.toContain('sk_web');
    expect(await readFile(file, 'utf8')).toBe(edited.replace('sk_ci_old', 'sk_ci_new'));
    await rm(dir, { recursive: true, force: true });
  });
});
