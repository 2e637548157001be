// `serve --workers 2` with HTTPS: every worker serves TLS on the one shared HTTPS port.
import { connect } from 'node:tls';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, expect, test } from 'vitest';
import { startServe, stopAll, tempDir, writeConfig } from '../helpers/cli.js';
import { tlsGet } from '../helpers/tls-http.js';
import { parseAnswer } from '../helpers/raw-http.js';

afterAll(stopAll);

const KEY = 'mk_httpsWorkers0000000000000000000001';

/** The serial number of the certificate a fresh TLS connection to `url` is shown. */
function serialSeen(url: string, ca: string): Promise<string> {
  const { hostname, port } = new URL(url);
  return new Promise((done, fail) => {
    const socket = connect({ host: hostname, port: Number(port), ca }, () => {
      done(socket.getPeerCertificate().serialNumber);
      socket.end();
    });
    socket.on('error', fail);
  });
}

test('every worker serves HTTPS on the shared port, each with a certificate of its own from the one CA', async () => {
  const dir = await tempDir('mockapi-https-workers-');
  const file = await writeConfig(
    dir,
    `apiKey: ${KEY}\nendpoints:\n  - method: GET\n    path: /hello\n    response: { body: hi }\n`,
  );
  const serve = await startServe(['-c', file, '--workers', '2', '--https', '0', '--no-state', '--log', 'off'], {
    cwd: dir,
  });
  expect(serve.stdout()).toMatch(
    /^mockapi listening on http:\/\/127\.0\.0\.1:\d+ and https:\/\/127\.0\.0\.1:\d+ \(1 endpoint, 2 workers\)\n/,
  );
  const ca = await readFile(join(dir, '.mockapi', 'tls', 'ca.pem'), 'utf8');
  // node:cluster hands connections round-robin: fresh connections reach both workers, whose certificates differ.
  const serials = new Set<string>();
  for (let i = 0; i < 20 && serials.size < 2; i++) serials.add(await serialSeen(serve.httpsUrl!, ca));
  expect(serials.size).toBe(2);
  const answer = parseAnswer((await tlsGet(serve.httpsUrl!, '/mock/hello', ca, { 'x-api-key': KEY })).bytes);
  expect(answer?.status).toBe(200);
  expect(answer?.body.toString()).toBe('hi');
  expect(await serve.stop()).toBe(0);
});
