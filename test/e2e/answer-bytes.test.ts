import { afterAll, beforeAll, expect, test } from 'vitest';
import { request } from 'undici';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { removeDir, startServe, stopAll, tempDir, writeConfig, type ServeProcess } from '../helpers/cli.js';

// Bodies are written as text when that is exactly their bytes (src/answer/answer-body.ts): every
// form must reach the client byte for byte, with the content-length of its bytes.
const KEY = 'mk_testKey0123456789abcdefghijklmnop';
const BINARY = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0xff, 0xfe, 0x00, 0xc3, 0x28, 0x0a]);
const LARGE = `${'Zoë café ✓ '.repeat(2000)}\n`;

let dir: string;
let server: ServeProcess;

beforeAll(async () => {
  dir = await tempDir();
  await writeFile(join(dir, 'image.png'), BINARY);
  await writeFile(join(dir, 'large.txt'), LARGE);
  const file = await writeConfig(
    dir,
    `project: bytes
apiKey: ${KEY}
endpoints:
  - method: GET
    path: /text
    response:
      body: "Zoë — café ✓ 𝄞"
  - method: GET
    path: /json
    response:
      body: { name: Zoë, tags: [café, "✓"] }
  - method: GET
    path: /image
    response:
      bodyFile: image.png
  - method: GET
    path: /large
    response:
      bodyFile: large.txt
  - method: GET
    path: /hello
    response:
      body: { greeting: "Hello \${query.name}", id: "\${query.missing}" }
  - method: GET
    path: /echo
    response:
      body: "\${query.name}"
`,
  );
  server = await startServe(['-c', file, '--no-state', '--log', 'off'], { cwd: dir });
});

afterAll(async () => {
  await stopAll();
  await removeDir(dir);
});

async function bytes(path: string, method: 'GET' | 'HEAD' = 'GET') {
  const res = await request(`${server.url}${path}`, { method, headers: { 'x-api-key': KEY } });
  const body = Buffer.from(await res.body.arrayBuffer());
  return { status: res.statusCode, length: res.headers['content-length'], type: res.headers['content-type'], body };
}

test.each([
  ['/mock/text', Buffer.from('Zoë — café ✓ 𝄞', 'utf8'), 'text/plain; charset=utf-8'],
  ['/mock/json', Buffer.from('{"name":"Zoë","tags":["café","✓"]}', 'utf8'), 'application/json; charset=utf-8'],
  ['/mock/image', BINARY, 'image/png'],
  ['/mock/large', Buffer.from(LARGE, 'utf8'), 'text/plain; charset=utf-8'],
  [
    '/mock/hello?name=Zo%C3%AB%20%E2%9C%93',
    Buffer.from('{"greeting":"Hello Zoë ✓","id":null}', 'utf8'),
    'application/json; charset=utf-8',
  ],
  ['/mock/echo?name=%F0%9D%84%9E', Buffer.from('𝄞', 'utf8'), 'text/plain; charset=utf-8'],
])('GET %s arrives byte for byte with the length of its bytes', async (path, expected, type) => {
  const res = await bytes(path);
  expect(res.status).toBe(200);
  expect(res.type).toBe(type);
  expect(res.length).toBe(String(expected.length));
  expect(res.body.equals(expected)).toBe(true);
  // A second request is answered from the same prepared body.
  expect((await bytes(path)).body.equals(expected)).toBe(true);
});

test('HEAD of a text body and of a rendered one: the GET length, no body', async () => {
  for (const [path, expected] of [
    ['/mock/text', Buffer.from('Zoë — café ✓ 𝄞')],
    ['/mock/hello?name=%C3%A9', Buffer.from('{"greeting":"Hello é","id":null}')],
  ] as const) {
    const res = await bytes(path, 'HEAD');
    expect(res.status).toBe(200);
    expect(res.length).toBe(String(expected.length));
    expect(res.body.length).toBe(0);
  }
});
