import { parse } from 'node:querystring';
import { describe, expect, it } from 'vitest';
import { parseQuery } from '../../../src/answer/request-context.js';

describe('parseQuery (a query with nothing to decode is split without querystring)', () => {
  it('reads as querystring.parse on every small query over a tricky alphabet', () => {
    const alphabet = ['a', 'b', '=', '&', '&', ';', '%41', '+', '?', '#', '__proto__', 'constructor', ''];
    let state = 12345;
    const pick = (): string => {
      state = (Math.imul(state, 1103515245) + 12345) >>> 0;
      return alphabet[state % alphabet.length] as string;
    };
    for (let n = 0; n < 5000; n++) {
      let text = '';
      const length = n % 12;
      for (let i = 0; i < length; i++) text += pick();
      expect({ ...parseQuery(text) }, JSON.stringify(text)).toEqual({ ...parse(text) });
      expect(Object.keys(parseQuery(text)), JSON.stringify(text)).toEqual(Object.keys(parse(text)));
    }
  });

  it('repeats become lists; a long query keeps querystring own pair cap', () => {
    expect({ ...parseQuery('tag=a&tag=b&tag=c&x') }).toEqual({ tag: ['a', 'b', 'c'], x: '' });
    const long = Array.from({ length: 1500 }, (_, i) => `k${i}=${i}`).join('&');
    expect(Object.keys(parseQuery(long))).toHaveLength(Object.keys(parse(long)).length);
  });
});
