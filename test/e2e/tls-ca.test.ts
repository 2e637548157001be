// The project's CA and the certificates it signs, tested on the modules with an injected `now`:
// one CA for starts that race, a key file never overwritten, lifetimes and names.
import { X509Certificate } from 'node:crypto';
import { readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, test } from 'vitest';
import { useTempDir } from '../helpers/cli.js';
import { issueLeaf, leafNames, LEAF_LIFETIME_MS } from '../../src/tls/leaf.js';
import { CaError, caPaths, ensureProjectCa } from '../../src/tls/project-ca.js';
import { readTlsPair } from '../../src/tls-pair.js';
import { httpsSettings } from '../../src/tls/settings.js';

const folder = useTempDir('mockapi-tls-ca-', { each: true });
const NOW = new Date('2026-03-01T12:00:00Z');
const HOUR = 3600 * 1000;

describe('the project CA', () => {
  test('eight starts at once make one CA; no side files are left', async () => {
    const cas = await Promise.all(Array.from({ length: 8 }, () => ensureProjectCa(folder.path, NOW)));
    expect(new Set(cas.map((ca) => ca.certPem)).size).toBe(1);
    expect(new Set(cas.map((ca) => ca.keyPem)).size).toBe(1);
    const paths = caPaths(folder.path);
    expect((await readdir(paths.dir)).sort()).toEqual(['ca-key.pem', 'ca.pem']);
    expect(await readFile(paths.certFile, 'utf8')).toBe(cas[0]!.certPem);
  });

  test('an existing key file is read, never rewritten; a missing ca.pem is written again from it', async () => {
    const first = await ensureProjectCa(folder.path, NOW);
    const keyText = await readFile(first.keyFile, 'utf8');
    await rm(first.certFile);
    const again = await ensureProjectCa(folder.path, new Date(NOW.getTime() + 24 * HOUR));
    expect(again.certPem).toBe(first.certPem);
    expect(await readFile(first.keyFile, 'utf8')).toBe(keyText);
    expect(await readFile(first.certFile, 'utf8')).toBe(first.certPem);
  });

  test('a damaged key file is an error that says what to do, and is left as it is', async () => {
    const paths = caPaths(folder.path);
    await ensureProjectCa(folder.path, NOW);
    await writeFile(paths.keyFile, 'not a key');
    await expect(ensureProjectCa(folder.path, NOW)).rejects.toThrow(
      new CaError(
        `the local CA key file ${paths.keyFile} is damaged; delete the folder ${paths.dir} to make a new CA (clients must then trust the new one)`,
      ),
    );
    expect(await readFile(paths.keyFile, 'utf8')).toBe('not a key');
  });

  test('an expired CA is an error, not replaced', async () => {
    const ca = await ensureProjectCa(folder.path, NOW);
    const later = new Date(NOW.getTime() + 11 * 365 * 24 * HOUR);
    await expect(ensureProjectCa(folder.path, later)).rejects.toThrow(
      /^the local CA in .* expired on 2036-02-2\dT12:00:00\.000Z; delete that folder to make a new one/,
    );
    expect((await ensureProjectCa(folder.path, NOW)).certPem).toBe(ca.certPem);
  });

  test('the CA: ECDSA P-256, a CA certificate, valid from an hour before now', async () => {
    const ca = await ensureProjectCa(folder.path, NOW);
    const cert = new X509Certificate(ca.certPem);
    expect(cert.ca).toBe(true);
    expect(cert.publicKey.asymmetricKeyDetails?.namedCurve).toBe('prime256v1');
    expect(Date.parse(cert.validFrom)).toBe(NOW.getTime() - HOUR);
  });
});

describe('the server certificate', () => {
  test('valid from an hour before now for seven days, signed by the CA, with the names', async () => {
    const ca = await ensureProjectCa(folder.path, NOW);
    const pair = await issueLeaf(ca, leafNames('192.168.5.5', ['api.test']), NOW);
    const leaf = new X509Certificate(pair.cert);
    expect(Date.parse(leaf.validFrom)).toBe(NOW.getTime() - HOUR);
    expect(Date.parse(leaf.validTo)).toBe(NOW.getTime() + LEAF_LIFETIME_MS);
    expect(LEAF_LIFETIME_MS).toBe(7 * 24 * HOUR);
    expect(leaf.verify(new X509Certificate(ca.certPem).publicKey)).toBe(true);
    expect(leaf.subjectAltName).toBe(
      'DNS:localhost, IP Address:127.0.0.1, IP Address:0:0:0:0:0:0:0:1, IP Address:192.168.5.5, DNS:api.test',
    );
    expect(leaf.checkIssued(new X509Certificate(ca.certPem))).toBe(true);
  });

  test('each start gets a new key and serial', async () => {
    const ca = await ensureProjectCa(folder.path, NOW);
    const [a, b] = await Promise.all([issueLeaf(ca, ['localhost'], NOW), issueLeaf(ca, ['localhost'], NOW)]);
    expect(a.key).not.toBe(b.key);
    expect(new X509Certificate(a.cert).serialNumber).not.toBe(new X509Certificate(b.cert).serialNumber);
  });

  test('names: a wildcard bind address is left out, each name once', () => {
    expect(leafNames('0.0.0.0', ['localhost', 'api.test'])).toEqual(['localhost', '127.0.0.1', '::1', 'api.test']);
    expect(leafNames('::', [])).toEqual(['localhost', '127.0.0.1', '::1']);
    expect(leafNames('dev.local', [])).toEqual(['localhost', '127.0.0.1', '::1', 'dev.local']);
  });

  test('a generated pair reads back as a matching pair; two keys swapped do not', async () => {
    const ca = await ensureProjectCa(folder.path, NOW);
    const one = await issueLeaf(ca, ['localhost'], NOW);
    const two = await issueLeaf(ca, ['localhost'], NOW);
    await writeFile(join(folder.path, 'one.crt'), one.cert);
    await writeFile(join(folder.path, 'one.key'), one.key);
    await writeFile(join(folder.path, 'two.key'), two.key);
    expect(readTlsPair(join(folder.path, 'one.crt'), join(folder.path, 'one.key'))).toMatchObject({ ok: true });
    expect(readTlsPair(join(folder.path, 'one.crt'), join(folder.path, 'two.key'))).toEqual({
      ok: false,
      field: 'key',
      problem: `the key ${join(folder.path, 'two.key')} does not match the certificate ${join(folder.path, 'one.crt')}`,
    });
    expect(readTlsPair(join(folder.path, 'one.key'), join(folder.path, 'one.key'))).toMatchObject({
      ok: false,
      field: 'cert',
      problem: `${join(folder.path, 'one.key')} is not a PEM certificate`,
    });
  });
});

describe('HTTPS settings: the option over the config', () => {
  const fromConfig = { port: 8443, hosts: ['a.test'] };
  test('absent keeps the config; false turns it off; true turns it on with the defaults', () => {
    expect(httpsSettings(undefined, fromConfig)).toBe(fromConfig);
    expect(httpsSettings(false, fromConfig)).toBeUndefined();
    expect(httpsSettings(true, undefined)).toEqual({ port: 4443, hosts: [] });
  });
  test('fields override one by one; paths resolve against the working folder', () => {
    expect(httpsSettings({ port: 0, cert: 'c.pem', key: '/k.pem', hosts: ['b.test'] }, fromConfig, '/work')).toEqual({
      port: 0,
      cert: '/work/c.pem',
      key: '/k.pem',
      hosts: ['a.test', 'b.test'],
    });
  });
});
