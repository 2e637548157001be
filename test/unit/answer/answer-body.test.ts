import { describe, expect, test } from 'vitest';
import { bodyBytes, bodyLength, sameBody, TEXT_BODY_MAX, writtenForm } from '../../../src/answer/answer-body.js';

describe('answer bodies: text when that is exactly the bytes', () => {
  test('small UTF-8 bytes are kept as their text, and give the same bytes back', () => {
    const bytes = Buffer.from('{"name":"Zoë","note":"café ✓ 𝄞"}', 'utf8');
    const form = writtenForm(bytes);
    expect(typeof form).toBe('string');
    expect(bodyLength(form)).toBe(bytes.length);
    expect(bodyBytes(form).equals(bytes)).toBe(true);
  });

  test('bytes that are not UTF-8 stay bytes (decoding would turn them into U+FFFD)', () => {
    for (const bytes of [
      Buffer.from([0xff, 0xfe, 0x00, 0x41]),
      Buffer.from([0x61, 0xc3]),
      Buffer.from([0xed, 0xa0, 0x80]),
    ]) {
      const form = writtenForm(bytes);
      expect(Buffer.isBuffer(form)).toBe(true);
      expect(bodyBytes(form)).toBe(bytes);
    }
  });

  test('a body over the limit stays bytes; one at the limit becomes text', () => {
    expect(Buffer.isBuffer(writtenForm(Buffer.alloc(TEXT_BODY_MAX + 1, 0x61)))).toBe(true);
    expect(typeof writtenForm(Buffer.alloc(TEXT_BODY_MAX, 0x61))).toBe('string');
  });

  test('text is kept as it is up to the limit in bytes, and as its UTF-8 bytes beyond', () => {
    const atLimit = 'é'.repeat(TEXT_BODY_MAX / 2);
    expect(writtenForm(atLimit)).toBe(atLimit);
    const over = `${atLimit}a`;
    const form = writtenForm(over);
    expect(Buffer.isBuffer(form)).toBe(true);
    expect(bodyBytes(form).equals(Buffer.from(over, 'utf8'))).toBe(true);
  });

  test('sameBody compares bytes whatever the form', () => {
    expect(sameBody('é', Buffer.from('é', 'utf8'))).toBe(true);
    expect(sameBody(Buffer.from('a'), 'a')).toBe(true);
    expect(sameBody('a', 'b')).toBe(false);
    expect(sameBody(Buffer.from([0xff]), Buffer.from([0xfe]))).toBe(false);
  });
});
