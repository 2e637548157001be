import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { parseDocument } from 'yaml';
import { replaceApiKey } from '../../src/config/replace-api-key.js';

const NEW = 'mk_NEWkey0123456789abcdefghijABCDEF';

/** Each case: the source and the expected text, written with `@` where the key goes. */
const replaced: Array<[name: string, source: string, expected: string]> = [
  ['plain', 'apiKey: mk_old\n', `apiKey: ${NEW}\n`],
  ['single-quoted', "apiKey: 'mk_old'\n", `apiKey: '${NEW}'\n`],
  ['double-quoted', 'apiKey: "mk_old"\n', `apiKey: "${NEW}"\n`],
  [
    'CRLF line endings',
    'project: x\r\napiKey: mk_old\r\nserver:\r\n  port: 1\r\n',
    `project: x\r\napiKey: ${NEW}\r\nserver:\r\n  port: 1\r\n`,
  ],
  ['comment on the same line', 'apiKey: mk_old  # the key\n', `apiKey: ${NEW}  # the key\n`],
  ['BOM', '\uFEFFapiKey: mk_old\n', `\uFEFFapiKey: ${NEW}\n`],
  [
    'key not first, comments and blank lines around',
    '# header\n\nproject: shop   # name\n\n# the key:\napiKey:    mk_old\n\n\nendpoints: []\n# trailing\n',
    `# header\n\nproject: shop   # name\n\n# the key:\napiKey:    ${NEW}\n\n\nendpoints: []\n# trailing\n`,
  ],
  ['no final newline', 'project: a\napiKey: mk_old', `project: a\napiKey: ${NEW}`],
  ['value on the next line', 'apiKey:\n  mk_old\nproject: a\n', `apiKey:\n  ${NEW}\nproject: a\n`],
  ['quoted key name', '"apiKey": mk_old\n', `"apiKey": ${NEW}\n`],
  ['explicit document start and end', '---\napiKey: mk_old\n...\n', `---\napiKey: ${NEW}\n...\n`],
  [
    'nested apiKey fields are left alone',
    'endpoints:\n  - apiKey: mk_old\napiKey: mk_old\n',
    `endpoints:\n  - apiKey: mk_old\napiKey: ${NEW}\n`,
  ],
  ['flow mapping at the top', '{ project: a, apiKey: mk_old }\n', `{ project: a, apiKey: ${NEW} }\n`],
  ['tabs and a comment before the value', 'apiKey:\t"mk_old"\t# k\n', `apiKey:\t"${NEW}"\t# k\n`],
];

const refused: Array<[name: string, source: string, reason: RegExp]> = [
  ['no apiKey', 'project: a\n', /no top-level apiKey/],
  ['empty file', '', /not a mapping/],
  ['apiKey only nested', 'server:\n  apiKey: mk_x\n', /no top-level apiKey/],
  ['duplicated apiKey', 'apiKey: mk_a\napiKey: mk_b\n', /2 times/],
  ['apiKey is a mapping', 'apiKey:\n  value: mk_a\n', /not a single string/],
  ['apiKey is a list', 'apiKey: [mk_a]\n', /not a single string/],
  ['literal block scalar', 'apiKey: |\n  mk_a\n', /block scalar/],
  ['folded block scalar', 'apiKey: >-\n  mk_a\n', /block scalar/],
  ['alias', 'k: &k mk_a\napiKey: *k\n', /alias/],
  ['anchor on the value', 'apiKey: &k mk_a\nother: *k\n', /anchor or a tag/],
  ['tag on the value', 'apiKey: !!str mk_a\n', /anchor or a tag/],
  ['no value', 'apiKey:\nproject: a\n', /no value/],
  ['two documents', 'apiKey: mk_a\n---\napiKey: mk_b\n', /2 YAML documents/],
  ['top level is a list', '- apiKey: mk_a\n', /not a mapping/],
  ['broken YAML', 'apiKey: "mk_a\n', /not valid YAML/],
];

describe('replaceApiKey', () => {
  it.each(replaced)('%s', (_name, source, expected) => {
    expect(replaceApiKey(source, NEW)).toEqual({ ok: true, text: expected });
  });

  it.each(refused)('refuses: %s', (_name, source, reason) => {
    const result = replaceApiKey(source, NEW);
    expect(result.ok).toBe(false);
    if (!result.ok) expect(result.reason).toMatch(reason);
  });

  it.each([
    ['a key YAML would read as a number', '12345', 'apiKey: "12345"\n'],
    ['a key YAML would read as a boolean', 'true', 'apiKey: "true"\n'],
    ['a key starting with a quote', "'quoted", `apiKey: "'quoted"\n`],
    ['a key starting with an indicator', '*star', 'apiKey: "*star"\n'],
  ])('falls back to double quotes for %s', (_name, key, expected) => {
    expect(replaceApiKey('apiKey: mk_old\n', key)).toEqual({ ok: true, text: expected });
  });

  it('keeps a plain value plain when the key reads back as itself', () => {
    expect(replaceApiKey('apiKey: mk_old\n', 'a\\b"c#d')).toEqual({ ok: true, text: 'apiKey: a\\b"c#d\n' });
  });

  it('escapes a double-quoted value when needed', () => {
    expect(replaceApiKey('apiKey: "mk_old"\n', 'a\\b"c')).toEqual({ ok: true, text: 'apiKey: "a\\\\b\\"c"\n' });
  });

  it('doubles a single quote inside a single-quoted value', () => {
    expect(replaceApiKey("apiKey: 'mk_old'\n", "it's")).toEqual({ ok: true, text: "apiKey: 'it''s'\n" });
  });

  it('changes exactly the bytes of the old key, for any generated-style key', () => {
    const base62 = fc.constantFrom(...'0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz'.split(''));
    const key = fc.array(base62, { minLength: 1, maxLength: 40 }).map((cs) => `mk_${cs.join('')}`);
    const style = fc.constantFrom(
      (k: string) => k,
      (k: string) => `'${k}'`,
      (k: string) => `"${k}"`,
    );
    const eol = fc.constantFrom('\n', '\r\n');
    fc.assert(
      fc.property(key, key, style, eol, fc.boolean(), (oldKey, newKey, quote, nl, bom) => {
        const before = `${bom ? '\uFEFF' : ''}# c${nl}project: p${nl}apiKey: ${quote(oldKey)}   # k${nl}limits:${nl}  monthlyQuota: 5${nl}`;
        const result = replaceApiKey(before, newKey);
        expect(result.ok).toBe(true);
        if (!result.ok) return;
        const at = before.indexOf(oldKey);
        expect(result.text).toBe(before.slice(0, at) + newKey + before.slice(at + oldKey.length));
        expect(parseDocument(result.text).get('apiKey')).toBe(newKey);
      }),
    );
  });
});
