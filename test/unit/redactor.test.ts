// The one redactor (src/redact/redactor.ts): a secret is scrubbed in every form a request carries it.
import { describe, expect, test } from 'vitest';
import { createRedactor, MAX_KNOWN, REDACTED } from '../../src/redact/redactor.js';

const KEY = 'mk_9WbDq2vG0yq7Jc4TnR1sXe8ZkP3fLmA6';
const OLD = 'mk_oldKey0000000000000000000000000';
const b64 = (text: string): string => Buffer.from(text).toString('base64');
const percentAll = (text: string): string => [...text].map((c) => `%${c.charCodeAt(0).toString(16)}`).join('');
const jsonEscaped = (text: string): string =>
  [...text].map((c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`).join('');

describe('a key is scrubbed in each form it travels in', () => {
  const redactor = createRedactor([KEY]);
  test.each([
    ['as is, in a path', `/mock/items/${KEY}`, `/mock/items/${REDACTED}`],
    [
      'percent-encoded (upper-case hex)',
      `/mock/items/mk%5F9WbDq2vG0yq7Jc4TnR1sXe8ZkP3fLmA6`,
      `/mock/items/${REDACTED}`,
    ],
    [
      'percent-encoded (lower-case hex)',
      `/mock/items/mk%5f9WbDq2vG0yq7Jc4TnR1sXe8ZkP3fLmA6`,
      `/mock/items/${REDACTED}`,
    ],
    ['every character percent-encoded', `/x/${percentAll(KEY)}/y`, `/x/${REDACTED}/y`],
    [
      'in a form-encoded body',
      `user=ann&key=${encodeURIComponent(KEY).replace('_', '%5F')}&x=1`,
      `user=ann&key=${REDACTED}&x=1`,
    ],
    ['\\u-escaped in JSON', `{"key":"${jsonEscaped(KEY)}"}`, `{"key":"${REDACTED}"}`],
    ['partly \\u-escaped in JSON', `{"key":"mk\\u005f9WbDq2vG0yq7Jc4TnR1sXe8ZkP3fLmA6"}`, `{"key":"${REDACTED}"}`],
    ['Basic credentials (key as user name)', `Basic ${b64(`${KEY}:`)}`, `Basic ${REDACTED}`],
    ['Basic credentials (key as password)', `Basic ${b64(`ann:${KEY}`)}`, `Basic ${REDACTED}`],
    ['Basic credentials, one byte before the key', `Basic ${b64(`a:${KEY}`)}`, `Basic ${REDACTED}`],
    [
      'URL-safe base64',
      `token=${b64(`xy${KEY}`).replace(/\+/g, '-').replace(/\//g, '_').replace(/=+$/, '')}`,
      `token=${REDACTED}`,
    ],
    ['twice', `${KEY} and ${KEY}`, `${REDACTED} and ${REDACTED}`],
  ])('%s', (_, text, scrubbed) => {
    expect(redactor.scrub(text)).toBe(scrubbed);
  });

  test('text without the key is returned as it is', () => {
    for (const text of ['', '/mock/items/42', 'a%20b \\u0041 %zz \\x', b64('hello world, nothing here')])
      expect(redactor.scrub(text)).toBe(text);
  });

  test('none of the key remains in any form', () => {
    for (const text of [`Basic ${b64(`${KEY}:`)}`, `Basic ${b64(`a:${KEY}`)}`, `Basic ${b64(`ab:${KEY}`)}`]) {
      const out = redactor.scrub(text);
      expect(out).not.toContain(KEY);
      expect(Buffer.from(out.replace(/^Basic /, '').replace(REDACTED, ''), 'base64').toString('latin1')).not.toMatch(
        /9WbD|fLmA/,
      );
    }
  });
});

describe('several secrets, rotation', () => {
  test('every secret given is scrubbed', () => {
    expect(createRedactor([KEY, OLD]).scrub(`${OLD}/${encodeURIComponent(KEY)}`)).toBe(`${REDACTED}/${REDACTED}`);
  });

  test('rotated keeps every key it replaced, the newest MAX_KNOWN', () => {
    const first = createRedactor([OLD]);
    expect(first.rotated(OLD)).toBe(first);
    const second = first.rotated(KEY);
    expect(second.scrub(`${KEY} ${OLD}`)).toBe(`${REDACTED} ${REDACTED}`);
    // Two rotations later the first key is still a secret.
    const third = second.rotated('mk_third00000000000000000000000000');
    expect(third.scrub(`${KEY} ${OLD} mk_third00000000000000000000000000`)).toBe(`${REDACTED} ${REDACTED} ${REDACTED}`);
    let many = third;
    for (let i = 0; i < MAX_KNOWN; i++) many = many.rotated(`mk_many${String(i).padStart(27, '0')}`);
    // The newest MAX_KNOWN: the first of the many is kept, the keys before them are not.
    expect(many.scrub(`${OLD} ${KEY} mk_many${'0'.repeat(27)} mk_many${String(MAX_KNOWN - 1).padStart(27, '0')}`)).toBe(
      `${OLD} ${KEY} ${REDACTED} ${REDACTED}`,
    );
  });

  test('no secrets: nothing is changed', () => {
    expect(createRedactor(['']).scrub('%41 \\u0041')).toBe('%41 \\u0041');
  });
});
