// "Copy as cURL" run through real shells: the command the inspector builds must give curl exactly the
// request's parts as arguments, whatever a client sent (quotes, `$`, backticks, globs, newlines), with
// only $MOCKAPI_KEY expanded — and curl must send one request, not a glob's worth.
import { execFile } from 'node:child_process';
import { chmod, writeFile } from 'node:fs/promises';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import type { Entry } from '../../src/inspector/page/api.js';
import { curlOf, exampleCurl } from '../../src/inspector/page/curl.js';
import { useTempDir } from '../helpers/cli.js';

const run = promisify(execFile);
const dir = useTempDir('mockapi-curl-');

function entry(overrides: Partial<Entry>): Entry {
  return {
    id: 1,
    time: '2026-11-23T10:00:00.000Z',
    method: 'GET',
    path: '/mock/users/42',
    query: {},
    headers: {},
    body: '',
    bodyTruncated: false,
    endpoint: null,
    response: null,
    status: 200,
    ms: 1,
    step: 'response',
    credential: { via: 'x-api-key', key: 'current' },
    notes: [],
    ...overrides,
  };
}

/** A key as hostile as the rest: the shell must expand the variable once and split nothing. */
const KEY = `k'ey $HOME \`id\` "q" *`;
const HOSTILE = `it's "$HOME" \`id\` $(echo x) [1-3] {a,b} * ; | & \\ \n second line\ttab`;

/** Runs `command` in `shell` with a fake curl first on PATH that writes its arguments, NUL-separated. */
async function argvOf(shell: string, command: string): Promise<string[]> {
  const fake = join(dir.path, 'curl');
  await writeFile(fake, `#!/bin/sh\nprintf '%s\\0' "$@"\n`);
  await chmod(fake, 0o755);
  const { stdout } = await run(shell, ['-c', command], {
    env: { PATH: `${dir.path}:${process.env.PATH ?? ''}`, MOCKAPI_KEY: KEY, HOME: '/nowhere' },
  });
  return stdout.split('\0').slice(0, -1);
}

describe('copy as cURL through a shell', () => {
  const hostile = entry({
    method: 'PUT',
    path: `/mock/items/[1-3]/{a,b}/it's/$HOME/\`id\``,
    query: { q: HOSTILE, 'k[]': ['x', 'y z'] },
    headers: {
      'x-evil': HOSTILE.replace(/\n/g, ' '),
      'x-empty': '',
      'x-dollar': '$MOCKAPI_KEY',
      cookie: '<redacted>',
      host: 'h',
    },
    body: HOSTILE,
  });
  const url = `http://127.0.0.1:4010/mock/items/[1-3]/{a,b}/it's/$HOME/\`id\`?q=${encodeURIComponent(HOSTILE)}&k%5B%5D=x&k%5B%5D=y%20z`;
  const expected = [
    '-g',
    '-X',
    'PUT',
    url,
    '-H',
    `X-API-Key: ${KEY}`,
    '-H',
    `x-evil: ${HOSTILE.replace(/\n/g, ' ')}`,
    '-H',
    'x-empty;',
    '-H',
    'x-dollar: $MOCKAPI_KEY',
    '-H',
    'Content-Type:',
    '--data-raw',
    HOSTILE,
  ];

  it.each(['sh', 'bash'])('gives curl exactly the request, only $MOCKAPI_KEY expanded (%s)', async (shell) => {
    const command = curlOf(hostile, 'http://127.0.0.1:4010');
    await run(shell, ['-n', '-c', command]);
    expect(await argvOf(shell, command)).toEqual(expected);
  });

  it.each([
    ['bearer', ['-H', `Authorization: Bearer ${KEY}`]],
    ['basic', ['-u', `${KEY}:`]],
    ['none', []],
  ])('sends the %s credential as one argument', async (via, flags) => {
    const command = curlOf(entry({ credential: { via, key: 'current' }, method: 'HEAD' }), 'http://h');
    expect(await argvOf('sh', command)).toEqual(['-g', '-I', 'http://h/mock/users/42', ...flags]);
  });

  it.each([
    ['query', { via: 'query', name: 'api_key' }, ['-g', `http://h/v1/x?page=2&api_key=${KEY}`]],
    ['header', { via: 'header', name: 'X-Shop-Token' }, ['-g', 'http://h/v1/x?page=2', '-H', `X-Shop-Token: ${KEY}`]],
    ['scheme', { via: 'scheme', name: 'token' }, ['-g', 'http://h/v1/x?page=2', '-H', `Authorization: token ${KEY}`]],
    ['cookie', { via: 'cookie', name: 'session' }, ['-g', 'http://h/v1/x?page=2', '-b', `session=${KEY}`]],
  ])(
    'sends a key that came in the %s (auth.accept) from $MOCKAPI_KEY, in the same place',
    async (_place, credential, argv) => {
      const command = curlOf(
        entry({
          path: '/v1/x',
          query: credential.via === 'query' ? { api_key: '<redacted>', page: '2' } : { page: '2' },
          credential: { ...credential, key: 'current' },
          headers: { 'x-shop-token': '<redacted>' },
        }),
        'http://h',
      );
      expect(await argvOf('sh', command)).toEqual(argv);
    },
  );

  it('the empty state example uses the base path and the first accepted place', async () => {
    expect(
      exampleCurl('http://h', { method: 'GET', path: '/users/:id' }, '/v1', { via: 'query', name: 'api_key' }),
    ).toBe(`curl 'http://h/v1/users/42?api_key='"$MOCKAPI_KEY"`);
    expect(
      await argvOf(
        'sh',
        exampleCurl('http://h', { method: 'GET', path: '/user' }, '/', { via: 'scheme', name: 'token' }),
      ),
    ).toEqual(['-H', `Authorization: token ${KEY}`, 'http://h/user']);
    expect(exampleCurl('http://h', { method: 'GET', path: '/' }, '/', { via: 'bearer' })).toBe(
      `curl -H "Authorization: Bearer $MOCKAPI_KEY" 'http://h/'`,
    );
  });

  it('keeps dot segments the request sent', async () => {
    expect(await argvOf('sh', curlOf(entry({ path: '/mock/a/../b' }), 'http://h'))).toEqual([
      '-g',
      '--path-as-is',
      'http://h/mock/a/../b',
      '-H',
      `X-API-Key: ${KEY}`,
    ]);
  });

  it('quotes the empty state example, with -g where the path has glob characters', async () => {
    expect(await argvOf('sh', exampleCurl('http://h', { method: 'GET', path: '/items/[all]/:id' }))).toEqual([
      '-g',
      '-H',
      `X-API-Key: ${KEY}`,
      'http://h/mock/items/[all]/42',
    ]);
    expect(exampleCurl('http://h', { method: 'POST', path: '/orders' })).toBe(
      `curl -X POST -H "X-API-Key: $MOCKAPI_KEY" 'http://h/mock/orders'`,
    );
  });

  it('replays a POST that sent no Content-Type without one (curl would send a form), and one that did with it', async () => {
    const seen: Array<string | undefined> = [];
    const server = createServer((req, res) => {
      req.resume().on('end', () => {
        seen.push(`${req.method} ${req.headers['content-type'] ?? '(none)'}`);
        res.end('ok');
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    try {
      const origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
      for (const headers of [{}, { 'content-type': 'application/json' }] as Array<Record<string, string>>) {
        const command = curlOf(entry({ method: 'POST', path: '/mock/orders', headers, body: '{"n":1}' }), origin);
        await run('bash', ['-c', `${command} -s`], { env: { PATH: process.env.PATH ?? '', MOCKAPI_KEY: 'mk_test' } });
      }
      expect(seen).toEqual(['POST (none)', 'POST application/json']);
    } finally {
      server.close();
    }
  });

  it('makes the real curl send one request for a path with [1-3] and {a,b}', async () => {
    const seen: string[] = [];
    const server = createServer((req, res) => {
      seen.push(`${req.method} ${req.url} ${req.headers['x-api-key']}`);
      res.end('ok');
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    try {
      const origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
      const command = curlOf(entry({ path: '/mock/items/[1-3]/{a,b}' }), origin);
      const { stdout } = await run('bash', ['-c', `${command} -s`], {
        env: { PATH: process.env.PATH ?? '', MOCKAPI_KEY: 'mk_test' },
      });
      expect(stdout).toBe('ok');
      expect(seen).toEqual(['GET /mock/items/[1-3]/{a,b} mk_test']);
    } finally {
      server.close();
    }
  });
});
