// `mockapi record`: real upstreams on 127.0.0.1, recorded into the config, replayed byte for byte;
// secrets of every shape never written; an unredactable one refuses the write.
import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { afterAll, describe, expect, it } from 'vitest';
import { startServe, useTempDir, writeConfig, type ServeProcess } from '../helpers/cli.js';
import { admin, mock } from '../helpers/control.js';
import { NO_PROXY_ENV, startUpstream, type Upstream, type UpstreamHandler } from '../helpers/upstream.js';

const KEY = 'mk_recordTest000000000000000000001';
const UP_KEY = 'upstream-secret-Qw93kd';
const ENV = { ...NO_PROXY_ENV, MOCKAPI_UP_KEY: UP_KEY };
const dir = useTempDir('mockapi-record-', { each: true });
const ups: Upstream[] = [];
afterAll(async () => {
  await Promise.all(ups.map((u) => u.close()));
});

async function upstream(handler: UpstreamHandler): Promise<Upstream> {
  const up = await startUpstream(handler);
  ups.push(up);
  return up;
}

const configFor = (up: Upstream, extra = '') => `# hand-written header comment
apiKey: ${KEY}
upstream:
  url: ${up.url}
  auth: { header: Authorization, value: "Bearer \${env.MOCKAPI_UP_KEY}" }
${extra}endpoints:
  # my own endpoint
  - method: GET
    path: /mine
    response: { body: { mine: true } }
`;

const record = (args: string[] = []) =>
  startServe(['-c', 'mockapi.yaml', '--no-state', '--log', 'off', ...args], {
    cwd: dir.path,
    env: ENV,
    command: 'record',
  });
const get = (s: ServeProcess, path: string) => mock(s.url, 'GET', `/mock${path}`, { headers: { 'x-api-key': KEY } });

describe('mockapi record', () => {
  it('records traffic into templates, variations and sequences that replay byte for byte', async () => {
    let polls = 0;
    const png = Buffer.concat([Buffer.from([0x89, 0x50, 0x4e, 0x47, 0, 0, 0, 0]), Buffer.alloc(300, 7)]);
    const big = JSON.stringify({ items: Array.from({ length: 900 }, (_, i) => ({ i, label: `item ${i}` })) });
    const up = await upstream((req, res) => {
      const url = new URL(req.url, 'http://x');
      const users = /^\/users\/(\d+)$/.exec(url.pathname);
      if (users) {
        res.writeHead(200, {
          'content-type': 'application/json',
          'request-id': `req-${users[1]}`,
          'set-cookie': 'sid=1',
          date: 'Wed, 25 Nov 2026 10:00:00 GMT',
        });
        return res.end(JSON.stringify({ id: Number(users[1]), name: `User ${users[1]}` }));
      }
      if (url.pathname === '/jobs/7') {
        polls++;
        res.writeHead(polls <= 2 ? 202 : 200, { 'content-type': 'application/json' });
        return res.end(JSON.stringify({ state: polls <= 2 ? 'running' : 'done' }));
      }
      if (url.pathname === '/search') {
        res.writeHead(200, { 'content-type': 'application/json' });
        return res.end(JSON.stringify({ results: url.searchParams.get('q') === 'cats' ? ['Tom'] : [] }));
      }
      if (url.pathname === '/template') {
        res.writeHead(200, { 'content-type': 'text/plain' });
        return res.end('literal ${env.MOCKAPI_UP_KEY} and ${params.id} stay text');
      }
      if (url.pathname === '/big') {
        res.writeHead(200, { 'content-type': 'application/json' });
        return res.end(big);
      }
      if (url.pathname === '/img') {
        res.writeHead(200, { 'content-type': 'image/png' });
        return res.end(png);
      }
      if (url.pathname === '/gz') {
        res.writeHead(200, { 'content-type': 'application/json', 'content-encoding': 'gzip' });
        return res.end(gzipSync(JSON.stringify({ zipped: true })));
      }
      res.writeHead(404, { 'content-type': 'application/json' });
      res.end('{"error":"nope"}');
    });
    const original = configFor(up, 'recording:\n  keepResponseHeaders: [request-id]\n');
    await writeConfig(dir.path, original);
    const s = await record();
    const paths = [
      '/users/1',
      '/users/2',
      '/users/3',
      '/jobs/7',
      '/jobs/7',
      '/jobs/7',
      '/jobs/7',
      '/search?q=cats',
      '/search?q=dogs',
      '/template',
      '/big',
      '/img',
      '/mine',
    ];
    const live = [];
    for (const p of paths) {
      const r = await mock(s.url, 'GET', `/mock${p}`, { headers: { 'x-api-key': KEY } });
      live.push({ status: r.status, body: r.text, requestId: r.headers['request-id'] });
    }
    const gz = await get(s, '/gz');
    expect(gz.headers['content-encoding']).toBe('gzip'); // proxied as sent
    const status = await admin(s.url, 'GET', 'recording');
    expect(status.body).toMatchObject({ recording: true, mode: 'new', requests: 13 });
    expect(await s.stop()).toBe(0);
    expect(s.stderr()).toMatch(/13 requests recorded into 7 endpoints/);
    expect(s.stderr()).toContain(
      'added GET /users/:id (3 requests; folded /users/1, /users/2, /users/3 (template from segment shapes); variations: responses by params.id)',
    );
    expect(s.stderr()).toContain('added GET /jobs/:id (4 requests; answers changed over time: a sequence)');

    const written = await readFile(join(dir.path, 'mockapi.yaml'), 'utf8');
    // Hand-written parts and comments untouched, recorded endpoints marked.
    expect(written.startsWith(original)).toBe(true);
    expect(written).toContain('recorded: GET /users/:id');
    expect(written).toContain('recorded: GET /jobs/:id');
    expect(written).toContain('id: ${int(params.id)}');
    expect(written).toContain('literal $${env.MOCKAPI_UP_KEY} and $${params.id} stay text');
    expect(written).not.toContain('set-cookie');
    expect(written).not.toContain('date:');
    const files = (await readdir(join(dir.path, 'recorded'))).sort();
    expect(files).toHaveLength(2);
    expect(files.some((f) => /^[0-9a-f]{16}\.png$/.test(f))).toBe(true);
    expect(files.some((f) => /^[0-9a-f]{16}\.json$/.test(f))).toBe(true);
    expect(written).toMatch(/bodyFile: recorded\/[0-9a-f]{16}\.png/);

    // Replay: the recorded config alone answers as the upstream did, byte for byte.
    await up.close();
    const replay = await startServe(['-c', 'mockapi.yaml', '--no-state'], { cwd: dir.path, env: ENV });
    for (const [i, p] of paths.entries()) {
      const r = await get(replay, p);
      expect({ path: p, status: r.status, body: r.text }).toEqual({
        path: p,
        status: live[i]!.status,
        body: live[i]!.body,
      });
      if (p.startsWith('/users/')) expect(r.headers['request-id']).toBe(live[i]!.requestId);
    }
    const img = await mock(replay.url, 'GET', '/mock/img', { headers: { 'x-api-key': KEY } });
    expect(img.status).toBe(200);
    const gzReplay = await get(replay, '/gz');
    expect(gzReplay.text).toBe('{"zipped":true}');
    await replay.stop();
  });

  it('writes no secret of any shape from any place, and refuses the write when one cannot be redacted', async () => {
    const canaries = {
      jwt: 'eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.c2lnbmF0dXJlLXNpZw',
      stripe: 'sk_live_51HxYzAbCdEfGhIjKlMnOp',
      stripeTest: 'sk_test_51HxYzAbCdEfGhIjKlMnOp',
      aws: 'AKIAIOSFODNN7EXAMPLE',
      github: `ghp_${'a1B2c3D4e5'.repeat(4)}`,
      google: `AIza${'x'.repeat(35)}`,
      slack: 'xoxb-1234567890-abcdefghij',
      pem: '-----BEGIN RSA PRIVATE KEY-----\nMIIBOgIBAAJBAKj34GkxFhD90vcNLYLInFEX6Ppy1tPf9Cnzj4p4WGeKLs1Pt8Qu\n-----END RSA PRIVATE KEY-----',
      password: 'hunter2-very-secret',
      account: 'acct_1234567890ABCDEF',
      email: 'ada@example.com',
    };
    const up = await upstream((req, res) => {
      if (req.url === '/leaky') {
        res.writeHead(200, {
          'content-type': 'application/json',
          'x-token': canaries.stripeTest,
          'x-echo': `Bearer ${String(req.headers.authorization).slice(7)}`,
        });
        return res.end(
          JSON.stringify({
            note: `token is ${canaries.jwt}`,
            keys: [canaries.stripe, canaries.aws, canaries.github, canaries.google, canaries.slack],
            pem: canaries.pem,
            password: canaries.password,
            account: `id ${canaries.account}`,
            email: canaries.email,
            upstreamKey: UP_KEY,
            nested: { api_key: 'plain-looking-value', mockKey: KEY },
          }),
        );
      }
      if (req.url === '/leaky-big') {
        res.writeHead(200, { 'content-type': 'text/plain' });
        return res.end(`${'x'.repeat(20_000)} ${canaries.jwt} ${UP_KEY}`);
      }
      if (req.url === '/leaky-binary') {
        res.writeHead(200, { 'content-type': 'application/octet-stream' });
        return res.end(Buffer.concat([Buffer.from([0, 1, 2]), Buffer.from(canaries.aws)]));
      }
      res.writeHead(404).end();
    });
    const original = configFor(
      up,
      `recording:\n  keepResponseHeaders: [x-token, x-echo]\n  redact: { fields: [email], patterns: ['acct_[A-Za-z0-9]{16}'] }\n`,
    );
    await writeConfig(dir.path, original);
    const s = await record(['--only', 'GET /leaky*']);
    expect((await get(s, '/leaky')).status).toBe(200);
    expect((await get(s, '/leaky-big')).status).toBe(200);
    expect(await s.stop()).toBe(0);
    const written = await readFile(join(dir.path, 'mockapi.yaml'), 'utf8');
    const bodyFiles = await Promise.all(
      (await readdir(join(dir.path, 'recorded'))).map((f) => readFile(join(dir.path, 'recorded', f), 'utf8')),
    );
    const everything = [written.slice(original.length), ...bodyFiles].join('\n');
    for (const [name, value] of Object.entries({
      ...canaries,
      upstreamKey: UP_KEY,
      mockKey: KEY,
      pemLine: 'MIIBOgIBAAJBAKj34',
      plain: 'plain-looking-value',
    })) {
      expect({ name, found: everything.includes(value) }).toEqual({ name, found: false });
    }
    expect(everything).toContain('<redacted>');
    expect(s.stderr()).toMatch(/redacted \d+ × a JWT/);

    // A secret inside a binary body cannot be redacted: the write is refused, nothing changes.
    const before = await readFile(join(dir.path, 'mockapi.yaml'));
    const filesBefore = (await readdir(join(dir.path, 'recorded'))).sort();
    const t = await record();
    expect((await get(t, '/leaky-binary')).status).toBe(200);
    expect(await t.stop()).toBe(1);
    expect(t.stderr()).toMatch(/refused: a secret would have been written/);
    expect(t.stderr()).toMatch(/recorded\/[0-9a-f]{16}\.bin \(byte 3\): an AWS access key/);
    expect((await readFile(join(dir.path, 'mockapi.yaml'))).equals(before)).toBe(true);
    expect((await readdir(join(dir.path, 'recorded'))).sort()).toEqual(filesBefore);
  });

  it('proxies upstream 401/403/429 without recording them, and says so', async () => {
    const up = await upstream((_req, res) => {
      res.writeHead(403, { 'content-type': 'application/json' });
      res.end('{"error":"forbidden"}');
    });
    await writeConfig(dir.path, configFor(up));
    const before = await readFile(join(dir.path, 'mockapi.yaml'));
    const s = await record();
    const r = await get(s, '/private');
    expect(r.status).toBe(403);
    expect(r.text).toBe('{"error":"forbidden"}');
    expect(await s.stop()).toBe(0);
    expect(s.stderr()).toContain('1 upstream 401/403/429 answer was proxied but not recorded');
    const after = await readFile(join(dir.path, 'mockapi.yaml'));
    expect(after.equals(before)).toBe(true);
  });

  it('updates recorded endpoints in place on the next recording, gives byte-identical output for the same traffic, and previews and stops over the admin API', async () => {
    let version = 1;
    const up = await upstream((req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ path: req.url, version }));
    });
    const original = configFor(up);
    await writeConfig(dir.path, original);
    const traffic = async (s: ServeProcess) => {
      for (const p of ['/a', '/b/c']) expect((await get(s, p)).status).toBe(200);
    };
    const s = await record();
    await traffic(s);
    const preview = await admin(s.url, 'GET', 'recording/preview');
    expect(preview.status).toBe(200);
    expect(preview.body.preview).toContain('recorded: GET /a');
    expect(await readFile(join(dir.path, 'mockapi.yaml'), 'utf8')).toBe(original); // a preview writes nothing
    const stopped = await admin(s.url, 'POST', 'recording/stop', {});
    expect(stopped.status).toBe(200);
    expect(stopped.body).toMatchObject({ recording: false, written: true });
    const first = await readFile(join(dir.path, 'mockapi.yaml'), 'utf8');
    expect(await s.stop()).toBe(0);
    expect(s.stderr()).toContain('nothing was recorded');

    // The same traffic again (`--mode all`: recorded endpoints go upstream too): the same bytes.
    const again = await record(['--mode', 'all']);
    await traffic(again);
    expect(await again.stop()).toBe(0);
    expect(await readFile(join(dir.path, 'mockapi.yaml'), 'utf8')).toBe(first);
    expect(again.stderr()).toContain('is up to date; nothing was written');

    // New answers: the recorded endpoints are replaced where they stand; a field the user added stays.
    await writeConfig(
      dir.path,
      first.replace(
        '  - recorded: GET /a\n    method: GET\n    path: /a\n',
        '  - recorded: GET /a\n    method: GET\n    path: /a\n    delay: 5ms\n',
      ),
    );
    version = 2;
    const third = await record(['--mode', 'all']);
    await traffic(third);
    expect(await third.stop()).toBe(0);
    const updated = await readFile(join(dir.path, 'mockapi.yaml'), 'utf8');
    expect(updated.startsWith(original)).toBe(true);
    expect(updated.match(/recorded: GET \/a$/gm)).toHaveLength(1);
    expect(updated).toContain('delay: 5ms');
    expect(updated).toContain('version: 2');
    expect(updated).not.toContain('version: 1');
  });

  it('records from a HAR file offline', async () => {
    await writeConfig(dir.path, `apiKey: ${KEY}\nupstream:\n  url: https://api.example.com/v1\n`);
    const entry = (url: string, status: number, text: string, mimeType = 'application/json') => ({
      request: {
        method: 'GET',
        url,
        headers: [{ name: 'Authorization', value: 'Bearer sk_live_51HxYzAbCdEfGhIjKlMnOp' }],
      },
      response: {
        status,
        headers: [
          { name: 'Content-Type', value: mimeType },
          { name: 'Date', value: 'x' },
        ],
        content: { mimeType, text },
      },
    });
    const har = {
      log: {
        entries: [
          entry('https://api.example.com/v1/orders/ord_9f8e7d6c5b', 200, '{"id":"ord_9f8e7d6c5b","total":3}'),
          entry('https://api.example.com/v1/orders/ord_1a2b3c4d5e', 200, '{"id":"ord_1a2b3c4d5e","total":5}'),
          entry('https://other.example.com/v1/x', 200, '{}'),
          entry('https://api.example.com/v1/me', 401, '{"error":"no"}'),
        ],
      },
    };
    await writeConfig(dir.path, JSON.stringify(har), 'traffic.har');
    const { runCli } = await import('../helpers/cli.js');
    const result = await runCli(['record', '--from-har', 'traffic.har', '-c', 'mockapi.yaml'], {
      cwd: dir.path,
      env: ENV,
    });
    expect(result.code).toBe(0);
    expect(result.stderr).toContain(
      'added GET /orders/:id (2 requests; folded /orders/ord_9f8e7d6c5b, /orders/ord_1a2b3c4d5e (template from segment shapes); variations: responses by params.id)',
    );
    expect(result.stderr).toContain(
      'skipped entry 2: https://other.example.com/v1/x is not under https://api.example.com/v1',
    );
    expect(result.stderr).toContain('1 401/403/429 answer');
    const written = await readFile(join(dir.path, 'mockapi.yaml'), 'utf8');
    expect(written).toContain('id: ${params.id}');
    expect(written).not.toContain('sk_live');
    const replay = await startServe(['-c', 'mockapi.yaml', '--no-state'], { cwd: dir.path, env: ENV });
    expect((await get(replay, '/orders/ord_9f8e7d6c5b')).text).toBe('{"id":"ord_9f8e7d6c5b","total":3}');
    expect((await get(replay, '/orders/ord_1a2b3c4d5e')).text).toBe('{"id":"ord_1a2b3c4d5e","total":5}');
    await replay.stop();
  });

  it('needs an upstream, and with --dry-run prints what it would write and writes nothing', async () => {
    await writeConfig(dir.path, `apiKey: ${KEY}\n`);
    const { runCli } = await import('../helpers/cli.js');
    const none = await runCli(['record', '-c', 'mockapi.yaml', '--port', '0', '--no-state'], {
      cwd: dir.path,
      env: ENV,
    });
    expect(none.code).toBe(1);
    expect(none.stderr).toContain(
      'recording needs an upstream: set upstream.url in mockapi.yaml or pass --upstream <url>',
    );
    const har = {
      log: {
        entries: [
          {
            request: { method: 'GET', url: 'https://api.example.com/ping', headers: [] },
            response: { status: 200, headers: [], content: { mimeType: 'application/json', text: '{"pong":true}' } },
          },
        ],
      },
    };
    await writeConfig(dir.path, JSON.stringify(har), 'traffic.har');
    const dry = await runCli(['record', '--from-har', 'traffic.har', '--dry-run', '-c', 'mockapi.yaml'], {
      cwd: dir.path,
      env: ENV,
    });
    expect(dry.code).toBe(0);
    expect(dry.stdout).toContain('  - recorded: GET /ping');
    expect(dry.stderr).toContain('dry run: mockapi.yaml was left unchanged');
    expect(await readFile(join(dir.path, 'mockapi.yaml'), 'utf8')).toBe(`apiKey: ${KEY}\n`);
  });

  it('passes an event stream on as it arrives, and records it', async () => {
    let finish: (() => void) | undefined;
    const up = await upstream((_req, res) => {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.write(`data: {"n":1,"echo":"${UP_KEY}"}\n\n`);
      finish = () => res.end('data: [DONE]\n\n');
    });
    await writeConfig(dir.path, configFor(up));
    const s = await record();
    const { request } = await import('undici');
    const answer = await request(`${s.url}/mock/stream`, { headers: { 'x-api-key': KEY } });
    expect(answer.statusCode).toBe(200);
    expect(answer.headers['content-type']).toBe('text/event-stream');
    const reader = answer.body[Symbol.asyncIterator]();
    // The first event arrives while the upstream is still open.
    const first = await reader.next();
    expect(String(first.value)).toBe('data: {"n":1,"echo":"<redacted>"}\n\n');
    finish!();
    let rest = '';
    for (let r = await reader.next(); !r.done; r = await reader.next()) rest += String(r.value);
    expect(rest).toBe('data: [DONE]\n\n');
    expect(await s.stop()).toBe(0);
    const written = await readFile(join(dir.path, 'mockapi.yaml'), 'utf8');
    expect(written).toContain('recorded: GET /stream');
    expect(written).toContain('content-type: text/event-stream');
    expect(written).not.toContain(UP_KEY);
  });

  it('records an event stream as a stream of the same events, which a replay sends again', async () => {
    // CRLF and LF line ends, a comment, event names and ids, data over two lines, JSON data, `${` in data.
    const wire =
      ': connected\r\n\r\n' +
      'event: delta\r\nid: 1\r\ndata: {"text":"Hel"}\r\n\r\n' +
      'event: delta\nid: 2\ndata:lo ${name}\ndata:  two spaces\n\n' +
      `data: {"echo":"${UP_KEY}","n":3}\n\n` +
      'data: [DONE]\n\n';
    const up = await upstream((_req, res) => {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.end(wire);
    });
    await writeConfig(dir.path, configFor(up));
    const s = await record();
    expect((await get(s, '/chat')).status).toBe(200);
    expect(await s.stop()).toBe(0);
    const written = await readFile(join(dir.path, 'mockapi.yaml'), 'utf8');
    expect(written).toContain('format: sse');
    expect(written).not.toContain(UP_KEY);
    expect(written).not.toMatch(/gap|firstByte/);

    const served = await startServe(['-c', 'mockapi.yaml', '--no-state', '--log', 'off', '--no-watch'], {
      cwd: dir.path,
      env: ENV,
    });
    try {
      const replay = await mock(served.url, 'GET', '/mock/chat', { headers: { 'x-api-key': KEY } });
      expect(replay.status).toBe(200);
      expect(replay.headers['content-type']).toBe('text/event-stream');
      const { createParser } = await import('eventsource-parser');
      const events: Array<{ event?: string; id?: string; data: string }> = [];
      const comments: string[] = [];
      const parser = createParser({
        onEvent: (e) => events.push({ event: e.event, id: e.id, data: e.data }),
        onComment: (c) => comments.push(c),
      });
      parser.feed(replay.text);
      expect(comments).toEqual(['connected']);
      expect(replay.headers['cache-control']).toBe('no-cache');
      expect(events).toEqual([
        { event: 'delta', id: '1', data: '{"text":"Hel"}' },
        { event: 'delta', id: '2', data: 'lo ${name}\n two spaces' },
        { event: undefined, id: undefined, data: '{"echo":"<redacted>","n":3}' },
        { event: undefined, id: undefined, data: '[DONE]' },
      ]);
    } finally {
      await served.stop();
    }
  });

  it('takes path templates from an OpenAPI description given with --openapi', async () => {
    await writeConfig(dir.path, `apiKey: ${KEY}\n`);
    const spec = {
      openapi: '3.0.3',
      info: { title: 't', version: '1' },
      paths: { '/pets/{petId}': { get: { responses: { '200': { description: 'ok' } } } } },
    };
    await writeConfig(dir.path, JSON.stringify(spec), 'openapi.json');
    const entry = (name: string) => ({
      request: { method: 'GET', url: `https://api.example.com/pets/${name}`, headers: [] },
      response: { status: 200, headers: [], content: { mimeType: 'application/json', text: `{"name":"${name}"}` } },
    });
    await writeConfig(dir.path, JSON.stringify({ log: { entries: [entry('rex'), entry('tom')] } }), 'traffic.har');
    const { runCli } = await import('../helpers/cli.js');
    const result = await runCli(
      ['record', '--from-har', 'traffic.har', '--openapi', 'openapi.json', '-c', 'mockapi.yaml'],
      { cwd: dir.path, env: ENV },
    );
    expect(result.code).toBe(0);
    expect(result.stderr).toContain(
      'added GET /pets/:petId (2 requests; folded /pets/rex, /pets/tom (template from the OpenAPI description)',
    );
    const written = await readFile(join(dir.path, 'mockapi.yaml'), 'utf8');
    expect(written).toContain('name: ${params.petId}');
  });
});
