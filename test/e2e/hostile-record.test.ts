// `mockapi record` against an upstream that sends secrets in every layout and under every common
// name: pretty-printed, spaced and large JSON, lists under a secret name, secret-named headers kept
// by keepResponseHeaders, a token in a kept Location. Not one canary reaches the config or a body
// file, and the final scan refuses a secret-named field in clear wherever it is left.
import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { constants, createBrotliCompress, createGzip } from 'node:zlib';
import { afterAll, describe, expect, it } from 'vitest';
import { scanForSecrets } from '../../src/record/scan.js';
import { createScrubber } from '../../src/record/scrub.js';
import { startServe, useTempDir, writeConfig } from '../helpers/cli.js';
import { mock } from '../helpers/control.js';
import { NO_PROXY_ENV, startUpstream, type Upstream } from '../helpers/upstream.js';

const KEY = 'mk_hostileRecord000000000000000001';
const dir = useTempDir('mockapi-hostile-record-', { each: true });
const ups: Upstream[] = [];
afterAll(async () => {
  await Promise.all(ups.map((u) => u.close()));
});

/** A value no redaction shape knows: only its field's name gives it away. */
const canary = (name: string) => `canary-${name}-Zq81`;
const NAMES = [
  'password',
  'pwd',
  'passcode',
  'access_key',
  'accessKey',
  'sig',
  'auth_code',
  'sid',
  'bearer',
  'key',
  'client_secret',
  'refresh_token',
];

const record = () =>
  startServe(['-c', 'mockapi.yaml', '--no-state', '--log', 'off'], {
    cwd: dir.path,
    env: NO_PROXY_ENV,
    command: 'record',
  });

describe('record redacts secret-named fields whatever the layout, size and name', () => {
  it('pretty, spaced and large JSON, every common name, lists, kept headers and a kept Location: no canary written; replays keep the layout', async () => {
    const fields = Object.fromEntries(NAMES.map((n) => [n, canary(n)]));
    const pretty = JSON.stringify(
      { user: 'ada', ...fields, tokens: [canary('list1'), [canary('list2')]], passcode_hint: 'four digits', pin: 4321 },
      null,
      2,
    );
    const spaced = `{ "secret" : "${canary('spaced')}" , "count" : 3 }`;
    const large = JSON.stringify({ api_key: canary('large'), filler: 'x'.repeat(20_000) }, null, 1);
    const up = await startUpstream((req, res) => {
      const headers = { 'content-type': 'application/json', 'x-auth-token': canary('header'), 'x-request-id': 'req-1' };
      if (req.url === '/pretty') return res.writeHead(200, headers).end(pretty);
      if (req.url === '/spaced') return res.writeHead(200, headers).end(spaced);
      if (req.url === '/large') return res.writeHead(200, headers).end(large);
      if (req.url === '/moved')
        return res
          .writeHead(302, { location: `https://app.example/cb?state=abc&token=${canary('location')}&x=1` })
          .end();
      if (req.url === '/text')
        return res
          .writeHead(200, { 'content-type': 'text/plain' })
          .end(`see https://app.example/next?access_token=${canary('textquery')}`);
      res.writeHead(404).end();
    });
    ups.push(up);
    await writeConfig(
      dir.path,
      `apiKey: ${KEY}\nupstream:\n  url: ${up.url}\nrecording:\n  keepResponseHeaders: [x-auth-token, x-request-id, location]\nendpoints: []\n`,
    );
    const s = await record();
    const live: Record<string, string> = {};
    for (const path of ['/pretty', '/spaced', '/large', '/moved', '/text'])
      live[path] = (await mock(s.url, 'GET', `/mock${path}`, { headers: { 'x-api-key': KEY } })).text;
    expect(await s.stop()).toBe(0);
    expect(s.stderr()).toMatch(/5 requests recorded into 1 endpoint/);

    const written = await readFile(join(dir.path, 'mockapi.yaml'), 'utf8');
    const files = await readdir(join(dir.path, 'recorded'));
    expect(files).toHaveLength(1); // the large body
    const file = await readFile(join(dir.path, 'recorded', files[0]!), 'utf8');
    for (const text of [written, file]) expect(text).not.toMatch(/canary-/);
    expect(written).toContain('x-request-id: req-1');
    expect(written).toMatch(/x-auth-token: <redacted>/);
    expect(written).toContain('token=<redacted>&x=1');

    // Replay: the pretty body keeps its layout, only the secrets changed.
    const replay = await startServe(['-c', 'mockapi.yaml', '--no-state'], { cwd: dir.path, env: NO_PROXY_ENV });
    const redact = (text: string) =>
      text.replace(/"canary-[^"]*"/g, '"<redacted>"').replace(/"pin": 4321/, '"pin": "<redacted>"');
    expect((await mock(replay.url, 'GET', '/mock/pretty', { headers: { 'x-api-key': KEY } })).text).toBe(
      redact(live['/pretty']!),
    );
    expect((await mock(replay.url, 'GET', '/mock/spaced', { headers: { 'x-api-key': KEY } })).text).toBe(
      redact(live['/spaced']!),
    );
    expect((await mock(replay.url, 'GET', '/mock/large', { headers: { 'x-api-key': KEY } })).text).toBe(
      redact(live['/large']!),
    );
    expect(
      JSON.parse((await mock(replay.url, 'GET', '/mock/pretty', { headers: { 'x-api-key': KEY } })).text),
    ).toMatchObject({ user: 'ada', passcode_hint: 'four digits', tokens: ['<redacted>', ['<redacted>']] });
    await replay.stop();
  });
});

describe('the final scan checks secret-named fields, not only known shapes', () => {
  const scrub = createScrubber([KEY], undefined);
  const block = (text: string) => [{ key: 'GET /x', start: 0, text }];
  const scan = (text: string, files: Array<{ path: string; bytes: Buffer; binary: boolean }> = []) =>
    scanForSecrets('mockapi.yaml', text, block(text), files, scrub.known, scrub.secretField);

  it('refuses a secret-named field in clear in a written block, and in a JSON body file of any layout', () => {
    const yaml =
      '  - method: GET\n    path: /x\n    response:\n      body:\n        user: ada\n        password: hunter2-in-clear\n        tokens: [one, <redacted>]\n        tokens_used: 5\n';
    expect(scan(yaml).map((h) => h.what)).toEqual([
      'a field named like a secret (password) in clear',
      'a field named like a secret (tokens[]) in clear',
    ]);
    expect(scan(yaml)[0]!.where).toBe('mockapi.yaml:6:19');
    const pretty = Buffer.from(
      '{\n  "data" : {\n    "client_secret" :  "in-clear"\n  },\n  "pin": 1234, "count": 3\n}',
    );
    const hits = scan('  - method: GET\n', [{ path: 'recorded/a.json', bytes: pretty, binary: false }]);
    const at = (text: string) => pretty.toString().indexOf(text);
    expect(hits.map((h) => `${h.where}: ${h.what}`)).toEqual([
      `recorded/a.json (character ${at('"in-clear"')}): a field named like a secret (client_secret) in clear`,
      `recorded/a.json (character ${at('1234')}): a field named like a secret (pin) in clear`,
    ]);
    expect(scan('  - method: GET\n    body: { password: <redacted>, secret: "${env.MOCKAPI_SECRET}" }\n')).toEqual([]);
  });
});

/** `bytes` zeros compressed as a stream (nothing that size is ever held): a decompression bomb. */
async function bomb(kind: 'br' | 'gzip', bytes: number): Promise<Buffer> {
  const z =
    kind === 'br'
      ? createBrotliCompress({ params: { [constants.BROTLI_PARAM_QUALITY]: 1 } })
      : createGzip({ level: 1 });
  const out: Buffer[] = [];
  z.on('data', (c: Buffer) => out.push(c));
  const ended = new Promise((r) => z.on('end', r));
  const zeros = Buffer.alloc(1024 * 1024);
  for (let i = 0; i < bytes / zeros.length; i++) if (!z.write(zeros)) await new Promise((r) => z.once('drain', r));
  z.end();
  await ended;
  return Buffer.concat(out);
}

describe('a decompression bomb from the upstream', () => {
  it('is proxied as sent and not recorded, with a note; what was recorded before and after is written, stop exits 0', async () => {
    const br = await bomb('br', 300 * 1024 * 1024);
    const gz = await bomb('gzip', 300 * 1024 * 1024);
    expect(br.length).toBeLessThan(1024 * 1024);
    const up = await startUpstream((req, res) => {
      if (req.url === '/br')
        return res.writeHead(200, { 'content-type': 'application/json', 'content-encoding': 'br' }).end(br);
      if (req.url === '/gz')
        return res.writeHead(200, { 'content-type': 'application/json', 'content-encoding': 'gzip' }).end(gz);
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ path: req.url }));
    });
    ups.push(up);
    await writeConfig(dir.path, `apiKey: ${KEY}\nupstream:\n  url: ${up.url}\nendpoints: []\n`);
    const s = await record();
    const get = (path: string) =>
      mock(s.url, 'GET', `/mock${path}`, { headers: { 'x-api-key': KEY, 'accept-encoding': 'br, gzip' } });
    expect((await get('/before')).status).toBe(200);
    const sent = await get('/br');
    expect(sent.status).toBe(200);
    expect(sent.headers['content-encoding']).toBe('br'); // passed on as the upstream sent it
    expect((await get('/gz')).status).toBe(200);
    expect((await get('/after/x')).status).toBe(200);
    const journal = (await (await fetch(`${s.url}/__mockapi/requests`)).json()) as {
      requests: Array<{ path: string; notes: string[] }>;
    };
    expect(
      journal.requests.find((r) => r.path === '/mock/br')?.notes,
      JSON.stringify(journal.requests.map((r) => [r.path, r.notes])),
    ).toEqual(['upstream 200; not recorded: the answer is over 256 MiB once decoded, or does not decode']);
    expect(await s.stop()).toBe(0);
    expect(s.stderr()).toMatch(/2 requests recorded into 2 endpoints/);
    expect(s.stderr()).toMatch(
      /2 upstream answers were proxied but not recorded: over 256 MiB once decoded, or an encoding that does not decode/,
    );
    const written = await readFile(join(dir.path, 'mockapi.yaml'), 'utf8');
    expect(written).toContain('path: /before');
    expect(written).toContain('path: /after/x');
    expect(written).not.toContain('path: /br');
  });
});
