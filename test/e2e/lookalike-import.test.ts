// `mockapi import --look-alike`: the description's shape becomes the config's — the first server
// URL's path is `server.basePath` (endpoints keep the description's paths) and the security schemes
// the description uses are `auth.accept`. Black-box: the real CLI imports, the result serves.
import { describe, expect, test } from 'vitest';
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { runCli, startServe, useTempDir } from '../helpers/cli.js';
import { apiKeyOf } from '../helpers/openapi.js';

const temp = useTempDir('mockapi-lookalike-import-', { each: true });

const DESCRIPTION = `openapi: 3.0.3
info: { title: Shop, version: '1' }
servers:
  - url: https://api.shop.example/{version}
    variables: { version: { default: v2 } }
security:
  - QueryKey: []
  - Bearer: []
components:
  securitySchemes:
    QueryKey: { type: apiKey, in: query, name: api_key }
    Bearer: { type: http, scheme: bearer }
    Basic: { type: http, scheme: basic }
    Session: { type: apiKey, in: cookie, name: session }
    Token: { type: apiKey, in: header, name: X-Shop-Token }
    Unused: { type: apiKey, in: header, name: X-Never }
    OAuth: { type: oauth2, flows: { clientCredentials: { tokenUrl: /token, scopes: {} } } }
paths:
  /products:
    get:
      security: [{ Token: [] }, { Basic: [] }, { OAuth: [] }, { Session: [] }]
      responses:
        '200':
          description: ok
          content: { application/json: { example: [{ id: 1 }] } }
  /products/{id}:
    get:
      responses:
        '200':
          description: ok
          content: { application/json: { example: { id: 1 } } }
`;

describe('mockapi import --look-alike', () => {
  test('a new config gets server.basePath and auth.accept; endpoints keep the description paths and serve under it', async () => {
    const spec = join(temp.path, 'shop.yaml');
    const config = join(temp.path, 'mockapi.yaml');
    await writeFile(spec, DESCRIPTION);
    const result = await runCli(['import', spec, '-c', config, '--look-alike']);
    expect(result.code).toBe(0);
    const text = await readFile(config, 'utf8');
    expect(text).toContain(
      'server:\n  basePath: "/v2"\nauth:\n  accept: [{ query: api_key }, bearer, { header: X-Shop-Token }, basic, { cookie: session }]\n',
    );
    expect(text).toContain('    path: /products\n');
    expect(text).toContain('    path: /products/:id\n');

    const key = await apiKeyOf(config);
    const server = await startServe(['-c', config, '--no-state', '--no-watch']);
    try {
      const ok = await fetch(`${server.url}/v2/products/7?api_key=${key}`);
      expect([ok.status, await ok.text()]).toEqual([200, '{"id":1}']);
      expect((await fetch(`${server.url}/v2/products`, { headers: { 'x-shop-token': key } })).status).toBe(200);
      expect((await fetch(`${server.url}/v2/products`, { headers: { 'x-api-key': key } })).status).toBe(401);
    } finally {
      await server.stop();
    }

    // The config is served under the server path: a re-import, flag or not, keeps the paths and changes nothing.
    const again = await runCli(['import', spec, '-c', config]);
    expect(again.code).toBe(0);
    expect(again.stderr).toContain('is up to date; nothing was written');
    expect(await readFile(config, 'utf8')).toBe(text);
  });

  test.each([
    ['a server URL without a path', "servers: [{ url: 'https://api.example.com' }]\n"],
    ['no server at all', ''],
  ])('%s and no security scheme: basePath "/" and the common schemes, said in the summary', async (_, servers) => {
    const spec = join(temp.path, 'plain.yaml');
    const config = join(temp.path, 'mockapi.yaml');
    await writeFile(
      spec,
      `openapi: 3.0.3\ninfo: { title: Plain, version: '1' }\n${servers}paths:\n  /repos/{owner}:\n    get:\n      responses:\n        '200':\n          description: ok\n          content: { application/json: { example: { name: octo } } }\n`,
    );
    const result = await runCli(['import', spec, '-c', config, '--look-alike']);
    expect(result.code).toBe(0);
    expect(result.stderr).toContain(
      `${spec} declares no security scheme mockapi can read a key from: auth.accept is [bearer, { scheme: token }] (Authorization: Bearer <key> or Authorization: token <key>); edit it to accept others`,
    );
    const text = await readFile(config, 'utf8');
    expect(text).toContain('server:\n  basePath: "/"\nauth:\n  accept: [bearer, { scheme: token }]\n');
    expect(text).toContain('    path: /repos/:owner\n');

    const key = await apiKeyOf(config);
    const server = await startServe(['-c', config, '--no-state', '--no-watch']);
    try {
      for (const authorization of [`token ${key}`, `Bearer ${key}`]) {
        const res = await fetch(`${server.url}/repos/octo`, { headers: { authorization } });
        expect([res.status, await res.text()]).toEqual([200, '{"name":"octo"}']);
      }
      expect((await fetch(`${server.url}/repos/octo`, { headers: { 'x-api-key': key } })).status).toBe(401);
    } finally {
      await server.stop();
    }
  });

  test('without the flag a new config keeps the default shape: paths under the server path, no auth.accept', async () => {
    const spec = join(temp.path, 'shop.yaml');
    const config = join(temp.path, 'mockapi.yaml');
    await writeFile(spec, DESCRIPTION);
    expect((await runCli(['import', spec, '-c', config])).code).toBe(0);
    const text = await readFile(config, 'utf8');
    expect(text).toContain('    path: /v2/products\n');
    expect(text).not.toContain('basePath');
    expect(text).not.toContain('accept');
  });
});
