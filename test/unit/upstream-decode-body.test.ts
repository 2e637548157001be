// decodeBody (src/upstream/decode-body.ts): an upstream's body as recorded and verified, decoded by its
// content-encoding with a bound on what it decodes to.
import { describe, expect, test } from 'vitest';
import { brotliCompressSync, deflateRawSync, deflateSync, gzipSync } from 'node:zlib';
import { decodeBody } from '../../src/upstream/decode-body.js';

const TEXT = Buffer.from('{"id":"cus_1","object":"customer"}'.repeat(20));

describe('decodeBody', () => {
  test.each([
    ['gzip', gzipSync(TEXT)],
    ['x-gzip', gzipSync(TEXT)],
    ['GZip ', gzipSync(TEXT)],
    ['br', brotliCompressSync(TEXT)],
    ['deflate', deflateSync(TEXT)],
    // What some servers send as deflate: the raw stream without zlib's header.
    ['deflate', deflateRawSync(TEXT)],
  ])('%s: decoded', async (encoding, body) => {
    expect(await decodeBody(body, encoding)).toEqual(TEXT);
  });

  test('no encoding or identity: the body as it came, within the bound', async () => {
    expect(await decodeBody(TEXT, undefined)).toBe(TEXT);
    expect(await decodeBody(TEXT, 'identity')).toBe(TEXT);
    expect(await decodeBody(TEXT, '', TEXT.length - 1)).toBeUndefined();
  });

  test('more than the bound once decoded (a decompression bomb stops there): undefined', async () => {
    const bomb = gzipSync(Buffer.alloc(1 << 20));
    expect(await decodeBody(bomb, 'gzip', 1000)).toBeUndefined();
    expect(await decodeBody(deflateSync(Buffer.alloc(1 << 20)), 'deflate', 1000)).toBeUndefined();
  });

  test('an encoding it does not know, one named like an object member included, or a broken body: undefined', async () => {
    for (const encoding of ['compress', 'zstd', 'constructor', 'toString', '__proto__', 'hasOwnProperty'])
      expect(await decodeBody(TEXT, encoding)).toBeUndefined();
    expect(await decodeBody(Buffer.from('not gzip'), 'gzip')).toBeUndefined();
    expect(await decodeBody(Buffer.from('not deflate at all'), 'deflate')).toBeUndefined();
  });
});
