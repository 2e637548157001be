// Black-box tests of HTTPS: the built CLI on port 0 serving the same pipeline over TLS beside HTTP,
// trusted through the project's generated CA only (as `ca`, and through NODE_EXTRA_CA_CERTS in a
// child process), the certificate it serves, faults over TLS, a user's certificate and bad pairs.
import { X509Certificate as PeculiarCertificate } from '@peculiar/x509';
import { X509Certificate } from 'node:crypto';
import { execFile } from 'node:child_process';
import { readFile, stat, writeFile } from 'node:fs/promises';
import { request as httpsRequest } from 'node:https';
import { join } from 'node:path';
import { Agent, request } from 'undici';
import { afterAll, describe, expect, test } from 'vitest';
import { runCli, startServe, stopAll, tempDir, writeConfig, type ServeProcess } from '../helpers/cli.js';
import { parseAnswer } from '../helpers/raw-http.js';
import { tlsGet } from '../helpers/tls-http.js';

const KEY = 'mk_httpsTest000000000000000000000001';
const AUTH = { 'x-api-key': KEY };
const BODY = '0123456789'.repeat(6);

afterAll(stopAll);

function fault(kind: string, extra = ''): string {
  return `  - method: GET\n    path: /${kind}\n    faults: [{ kind: ${kind}, rate: 1${extra} }]\n    response: { body: "${BODY}" }\n`;
}

const CONFIG = `apiKey: ${KEY}
server:
  https:
    port: 0
    hosts: [api.example.test, 10.1.2.3]
endpoints:
  - method: GET
    path: /hello
    response: { body: { hello: world } }
${fault('reset')}${fault('close')}${fault('hang', ', after: 200ms')}${fault('slow', ', bytesPerSecond: 200')}  - method: GET
    path: /truncate
    response:
      body: "${BODY}"
      faults: [{ kind: truncate, rate: 1, bytes: 7 }]
`;

/** GET over node:https, trusting `ca` only. */
function httpsGet(url: string, ca: string): Promise<{ status: number; body: string }> {
  return new Promise((done, fail) => {
    const req = httpsRequest(url, { ca, headers: AUTH }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (d: string) => (body += d));
      res.on('end', () => done({ status: res.statusCode ?? 0, body }));
    });
    req.on('error', fail);
    req.end();
  });
}

describe('serve with server.https and a generated CA', () => {
  let dir: string;
  let proc: ServeProcess;
  let ca: string;
  let caFile: string;

  test('start: the ready line names the HTTP and the HTTPS URL', async () => {
    dir = await tempDir('mockapi-https-');
    const file = await writeConfig(dir, CONFIG);
    proc = await startServe(['-c', file, '--no-state', '--no-watch', '--log', 'off'], { cwd: dir });
    expect(proc.stdout()).toMatch(
      /^mockapi listening on http:\/\/127\.0\.0\.1:\d+ and https:\/\/127\.0\.0\.1:\d+ \(6 endpoints\)\n/,
    );
    caFile = join(dir, '.mockapi', 'tls', 'ca.pem');
    ca = await readFile(caFile, 'utf8');
  });

  test('the same endpoints answer over HTTPS (node:https with the CA as `ca`) and over HTTP', async () => {
    expect(await httpsGet(`${proc.httpsUrl}/mock/hello`, ca)).toEqual({ status: 200, body: '{"hello":"world"}' });
    const plain = await fetch(`${proc.url}/mock/hello`, { headers: AUTH });
    expect(plain.status).toBe(200);
    expect(await plain.text()).toBe('{"hello":"world"}');
  });

  test('undici with the CA, on 127.0.0.1 and on localhost', async () => {
    const agent = new Agent({ connect: { ca } });
    try {
      for (const url of [proc.httpsUrl!, proc.httpsUrl!.replace('127.0.0.1', 'localhost')]) {
        const res = await request(`${url}/mock/hello`, { dispatcher: agent, headers: AUTH });
        expect(res.statusCode).toBe(200);
        expect(await res.body.json()).toEqual({ hello: 'world' });
      }
    } finally {
      await agent.close();
    }
  });

  test('a client that does not trust the CA is refused by its own TLS check', async () => {
    await expect(
      httpsGet(`${proc.httpsUrl}/mock/hello`, (await import('node:tls')).rootCertificates.join('\n')),
    ).rejects.toMatchObject({ code: 'UNABLE_TO_VERIFY_LEAF_SIGNATURE' });
  });

  test('the certificate: ECDSA P-256 signed with SHA-256, short-lived, with the SANs', async () => {
    const seen = await tlsGet(proc.httpsUrl!, '/mock/hello', ca, AUTH);
    const leaf = new X509Certificate(seen.peer!.raw);
    expect(leaf.subjectAltName).toBe(
      'DNS:localhost, IP Address:127.0.0.1, IP Address:0:0:0:0:0:0:0:1, DNS:api.example.test, IP Address:10.1.2.3',
    );
    expect(leaf.publicKey.asymmetricKeyType).toBe('ec');
    expect(leaf.publicKey.asymmetricKeyDetails?.namedCurve).toBe('prime256v1');
    expect(leaf.ca).toBe(false);
    const parsed = new PeculiarCertificate(seen.peer!.raw);
    expect(parsed.signatureAlgorithm).toMatchObject({ name: 'ECDSA', hash: { name: 'SHA-256' } });
    const from = Date.parse(leaf.validFrom);
    const to = Date.parse(leaf.validTo);
    expect(from).toBeLessThanOrEqual(Date.now());
    expect(to).toBeGreaterThan(Date.now());
    expect(to - from).toBeLessThanOrEqual(8 * 24 * 3600 * 1000); // seven days and the hour it starts early
    expect(leaf.verify(new X509Certificate(ca).publicKey)).toBe(true);
    const root = new X509Certificate(ca);
    expect(root.ca).toBe(true);
    expect(root.publicKey.asymmetricKeyDetails?.namedCurve).toBe('prime256v1');
  });

  test("the CA's key is mode 0600 in a git-ignored folder; GET /__mockapi/tls/ca.pem serves the certificate", async () => {
    expect((await stat(join(dir, '.mockapi', 'tls', 'ca-key.pem'))).mode & 0o777).toBe(0o600);
    expect(await readFile(join(dir, '.mockapi', '.gitignore'), 'utf8')).toMatch(/^\*$/m);
    for (const url of [proc.url, proc.httpsUrl!]) {
      const res = await request(`${url}/__mockapi/tls/ca.pem`, { dispatcher: new Agent({ connect: { ca } }) });
      expect(res.statusCode).toBe(200);
      expect(res.headers['content-type']).toBe('application/x-pem-file');
      expect(await res.body.text()).toBe(ca);
    }
  });

  test('`mockapi tls env` and `tls path` name the CA; a child process trusts it through NODE_EXTRA_CA_CERTS', async () => {
    const env = await runCli(['tls', 'env'], { cwd: dir });
    expect(env).toMatchObject({ code: 0, stdout: `NODE_EXTRA_CA_CERTS=${caFile}\n` });
    expect(await runCli(['tls', 'path', '-c', join(dir, 'mockapi.yaml')])).toMatchObject({
      code: 0,
      stdout: `${caFile}\n`,
    });
    const script = `fetch(${JSON.stringify(`${proc.httpsUrl}/mock/hello`)}, { headers: { 'x-api-key': '${KEY}' } }).then(async (r) => console.log(r.status, await r.text()), (e) => { console.log('failed', e.cause?.code); });`;
    const run = (extra: Record<string, string>) =>
      new Promise<string>((done) =>
        execFile(
          process.execPath,
          ['-e', script],
          { env: { PATH: process.env.PATH ?? '', ...extra } },
          (_err, stdout) => done(stdout),
        ),
      );
    expect(await run({ NODE_EXTRA_CA_CERTS: caFile })).toBe('200 {"hello":"world"}\n');
    expect(await run({})).toBe('failed UNABLE_TO_VERIFY_LEAF_SIGNATURE\n');
  });

  describe('faults keep their meaning over TLS', () => {
    test('reset: the TCP connection is reset (ECONNRESET), nothing is answered', async () => {
      const seen = await tlsGet(proc.httpsUrl!, '/mock/reset', ca, AUTH);
      expect(seen.peer).toBeDefined(); // the handshake went through: the reset came after the request
      expect(seen).toMatchObject({ ended: 'error', errorCode: 'ECONNRESET' });
      expect(seen.bytes.length).toBe(0);
    });

    test('close: the connection is closed without an answer', async () => {
      const seen = await tlsGet(proc.httpsUrl!, '/mock/close', ca, AUTH);
      expect(seen).toMatchObject({ ended: 'end' });
      expect(seen.bytes.length).toBe(0);
    });

    test('hang: nothing is answered, the connection is closed after `after`', async () => {
      const seen = await tlsGet(proc.httpsUrl!, '/mock/hang', ca, AUTH);
      expect(seen.bytes.length).toBe(0);
      expect(seen.ended).toBe('end');
      expect(seen.ms).toBeGreaterThanOrEqual(190);
    });

    test('slow: the whole answer arrives, in pieces', async () => {
      const seen = await tlsGet(proc.httpsUrl!, '/mock/slow', ca, AUTH);
      const answer = parseAnswer(seen.bytes)!;
      expect(answer.status).toBe(200);
      expect(answer.body.toString()).toBe(BODY);
      expect(seen.pieces).toBeGreaterThanOrEqual(3);
      expect(seen.ms).toBeGreaterThanOrEqual(200); // 60 bytes at 200 B/s
    });

    test('truncate: the head with the full content-length, `bytes` of the body, then the connection closes', async () => {
      const seen = await tlsGet(proc.httpsUrl!, '/mock/truncate', ca, AUTH);
      const answer = parseAnswer(seen.bytes)!;
      expect(answer.status).toBe(200);
      expect(answer.headers['content-length']).toBe(String(BODY.length));
      expect(answer.body.toString()).toBe(BODY.slice(0, 7));
      expect(seen.ended).toBe('end');
    });
  });

  test('a second start reuses the CA: the key file is not rewritten', async () => {
    const key = await readFile(join(dir, '.mockapi', 'tls', 'ca-key.pem'), 'utf8');
    const second = await startServe(
      ['-c', join(dir, 'mockapi.yaml'), '--no-state', '--no-watch', '--log', 'off', '--https', '0'],
      { cwd: dir },
    );
    expect(await httpsGet(`${second.httpsUrl}/mock/hello`, ca)).toMatchObject({ status: 200 });
    expect(await readFile(join(dir, '.mockapi', 'tls', 'ca-key.pem'), 'utf8')).toBe(key);
    expect(await second.stop()).toBe(0);
  });

  test('stops gracefully (exit 0) with both ports', async () => {
    expect(await proc.stop()).toBe(0);
  });
});

/** A certificate and key for localhost signed by a CA made in a folder of its own. */
async function userPair(dir: string, name: string): Promise<{ cert: string; key: string; ca: string }> {
  const { ensureProjectCa } = await import('../../src/tls/project-ca.js');
  const { issueLeaf } = await import('../../src/tls/leaf.js');
  const ca = await ensureProjectCa(join(dir, `ca-of-${name}`));
  const pair = await issueLeaf(ca, ['localhost', '127.0.0.1']);
  await writeFile(join(dir, `${name}.crt`), pair.cert);
  await writeFile(join(dir, `${name}.key`), pair.key);
  return { cert: join(dir, `${name}.crt`), key: join(dir, `${name}.key`), ca: ca.certPem };
}

describe("a certificate of the user's own", () => {
  test('--tls-cert/--tls-key serve it (and no local CA is made)', async () => {
    const dir = await tempDir('mockapi-https-own-');
    const mine = await userPair(dir, 'mine');
    const file = await writeConfig(
      dir,
      `apiKey: ${KEY}\nendpoints:\n  - method: GET\n    path: /hello\n    response: { body: ok }\n`,
    );
    const proc = await startServe(
      [
        '-c',
        file,
        '--no-state',
        '--no-watch',
        '--log',
        'off',
        '--https',
        '0',
        '--tls-cert',
        mine.cert,
        '--tls-key',
        mine.key,
      ],
      { cwd: dir },
    );
    expect(await httpsGet(`${proc.httpsUrl}/mock/hello`, mine.ca)).toEqual({ status: 200, body: 'ok' });
    await expect(stat(join(dir, '.mockapi', 'tls'))).rejects.toMatchObject({ code: 'ENOENT' });
    const res = await fetch(`${proc.url}/__mockapi/tls/ca.pem`);
    expect(res.status).toBe(404);
    expect(await proc.stop()).toBe(0);
  });

  test('a pair that does not match is a config error at the field, naming both files', async () => {
    const dir = await tempDir('mockapi-https-bad-');
    const one = await userPair(dir, 'one');
    const two = await userPair(dir, 'two');
    const file = await writeConfig(
      dir,
      `apiKey: ${KEY}\nserver:\n  https:\n    port: 0\n    cert: one.crt\n    key: two.key\nendpoints: []\n`,
    );
    const validate = await runCli(['validate', '-c', file]);
    expect(validate.code).toBe(1);
    expect(validate.stderr).toBe(
      `${file}:6:10: server.https.key the key ${two.key} does not match the certificate ${one.cert}\n`,
    );
    const serve = await runCli(['serve', '-c', file, '--port', '0', '--no-state']);
    expect(serve.code).toBe(1);
    expect(serve.stderr).toContain(
      `${file}:6:10: server.https.key the key ${two.key} does not match the certificate ${one.cert}`,
    );
  });

  test('the same with the flags: exit 1, naming both files', async () => {
    const dir = await tempDir('mockapi-https-flags-');
    const one = await userPair(dir, 'one');
    const two = await userPair(dir, 'two');
    const file = await writeConfig(dir, `apiKey: ${KEY}\nendpoints: []\n`);
    const serve = await runCli([
      'serve',
      '-c',
      file,
      '--port',
      '0',
      '--no-state',
      '--https',
      '0',
      '--tls-cert',
      one.cert,
      '--tls-key',
      two.key,
    ]);
    expect(serve).toMatchObject({ code: 1, stdout: '' });
    expect(serve.stderr).toBe(
      `mockapi: HTTPS: the key ${two.key} does not match the certificate ${one.cert}; not starting\n`,
    );
  });

  test('an unreadable file, a missing key: config errors naming the file', async () => {
    const dir = await tempDir('mockapi-https-missing-');
    const file = await writeConfig(
      dir,
      `apiKey: ${KEY}\nserver:\n  https:\n    cert: nowhere.crt\n    key: nowhere.key\nendpoints: []\n`,
    );
    const validate = await runCli(['validate', '-c', file]);
    expect(validate.code).toBe(1);
    expect(validate.stderr).toBe(
      `${file}:4:11: server.https.cert cannot read the certificate file ${join(dir, 'nowhere.crt')}: no such file\n`,
    );
    const alone = await writeConfig(
      dir,
      `apiKey: ${KEY}\nserver:\n  https: { cert: nowhere.crt }\nendpoints: []\n`,
      'alone.yaml',
    );
    const second = await runCli(['validate', '-c', alone]);
    expect(second.code).toBe(1);
    expect(second.stderr).toContain('server.https.cert needs server.https.key, the private key of this certificate');
  });
});

describe('startMockServer({ https })', () => {
  test('resolves with httpsUrl, httpsPort, ca and caFile; the same endpoints answer on both', async () => {
    const { startMockServer } = await import('../../src/index.js');
    const dir = await tempDir('mockapi-https-api-');
    const file = await writeConfig(
      dir,
      `apiKey: ${KEY}\nendpoints:\n  - method: GET\n    path: /hello\n    response: { body: hi }\n`,
    );
    const server = await startMockServer({ config: file, port: 0, https: { port: 0 } });
    try {
      expect(server.httpsUrl).toBe(`https://127.0.0.1:${server.httpsPort}`);
      expect(server.caFile).toBe(join(dir, '.mockapi', 'tls', 'ca.pem'));
      expect(server.ca).toBe(await readFile(server.caFile!, 'utf8'));
      const agent = new Agent({ connect: { ca: server.ca } });
      const res = await request(`${server.httpsUrl}/mock/hello`, { dispatcher: agent, headers: AUTH });
      expect(res.statusCode).toBe(200);
      expect(await res.body.text()).toBe('hi');
      await agent.close();
    } finally {
      await server.close();
    }
  });

  test("https: false turns off the config's HTTPS; a mismatched pair rejects with TlsSetupError", async () => {
    const { startMockServer, TlsSetupError } = await import('../../src/index.js');
    const dir = await tempDir('mockapi-https-api-off-');
    const file = await writeConfig(dir, `apiKey: ${KEY}\nserver:\n  https: { port: 0 }\nendpoints: []\n`);
    const server = await startMockServer({ config: file, port: 0, https: false });
    expect(server.httpsUrl).toBeUndefined();
    await server.close();
    const one = await userPair(dir, 'one');
    const two = await userPair(dir, 'two');
    await expect(
      startMockServer({ config: file, port: 0, https: { port: 0, cert: one.cert, key: two.key } }),
    ).rejects.toThrow(new TlsSetupError(`the key ${two.key} does not match the certificate ${one.cert}`));
  });

  test('a stop does not wait for a connection still in its TLS handshake', async () => {
    const { startMockServer } = await import('../../src/index.js');
    const dir = await tempDir('mockapi-https-stop-');
    const file = await writeConfig(dir, `apiKey: ${KEY}\nendpoints: []\n`);
    const server = await startMockServer({ config: file, port: 0, https: { port: 0 } });
    const { connect } = await import('node:net');
    const silent = connect(server.httpsPort!, '127.0.0.1');
    await new Promise((r) => silent.once('connect', r));
    const closed = new Promise((r) => silent.once('close', r));
    silent.on('error', () => {});
    const stopped = server.close();
    // Generous: the handshake timeout (10 s) must not be what ends it.
    await expect(
      Promise.race([stopped.then(() => 'stopped'), new Promise((r) => setTimeout(() => r('still waiting'), 5000))]),
    ).resolves.toBe('stopped');
    await closed;
  });
});

test('a change of server.https while serving is announced: it takes a restart', async () => {
  const dir = await tempDir('mockapi-https-reload-');
  const yaml = (hosts: string) => `apiKey: ${KEY}\nserver:\n  https: { port: 0, hosts: [${hosts}] }\nendpoints: []\n`;
  const file = await writeConfig(dir, yaml('a.test'));
  const proc = await startServe(['-c', file, '--no-state', '--log', 'off'], { cwd: dir });
  await writeFile(file, yaml('b.test'));
  await proc.waitForOutput(/server\.https changed: restart mockapi to serve HTTPS as configured/);
  expect(await proc.stop()).toBe(0);
});

test('`mockapi tls env` makes the CA before any start; a wrong word is a usage error; a missing config exits 1', async () => {
  const dir = await tempDir('mockapi-https-tls-cmd-');
  const file = await writeConfig(dir, `apiKey: ${KEY}\nendpoints: []\n`);
  const env = await runCli(['tls', 'env', '-c', file]);
  expect(env).toMatchObject({ code: 0, stdout: `NODE_EXTRA_CA_CERTS=${join(dir, '.mockapi', 'tls', 'ca.pem')}\n` });
  expect(new X509Certificate(await readFile(join(dir, '.mockapi', 'tls', 'ca.pem'))).ca).toBe(true);
  expect(await runCli(['tls', 'show', '-c', file])).toMatchObject({
    code: 2,
    stderr: 'mockapi: tls takes env or path, got "show"\n',
  });
  expect(await runCli(['tls', 'path', '-c', join(dir, 'none.yaml')])).toMatchObject({
    code: 1,
    stderr:
      'mockapi: no config file at ' + join(dir, 'none.yaml') + '; the local CA lives beside it (pass -c <file>)\n',
  });
});

test('an HTTPS port in use: exit 1, saying it is the HTTPS port, and nothing is left listening', async () => {
  const dir = await tempDir('mockapi-https-inuse-');
  const file = await writeConfig(dir, `apiKey: ${KEY}\nendpoints: []\n`);
  const first = await startServe(['-c', file, '--no-state', '--no-watch', '--log', 'off', '--https', '0'], {
    cwd: dir,
  });
  const port = new URL(first.httpsUrl!).port;
  const second = await runCli(['serve', '-c', file, '--port', '0', '--no-state', '--no-watch', '--https', port]);
  expect(second).toMatchObject({
    code: 1,
    stderr: `mockapi: HTTPS port ${port} on 127.0.0.1 is already in use (try --https 0 for any free port)\n`,
  });
  expect(await first.stop()).toBe(0);
});
