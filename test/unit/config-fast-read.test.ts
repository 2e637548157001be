import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import fc from 'fast-check';
import { LineCounter, parseDocument, stringify } from 'yaml';
import { describe, expect, test } from 'vitest';
import { readYamlFast } from '../../src/config/fast-read.js';
import { preferCodeWhen, preferWhen, renderEndpoint } from '../../src/openapi/render.js';
import { surprisingKeys } from '../../src/config/yaml-guards.js';
import { canonical } from '../helpers/canonical.js';

/**
 * The fast reader (js-yaml) may only answer when its data is exactly what the positioned reader
 * (`yaml`, as load.ts's slow path calls it) gives for a sound document. Declining is always allowed.
 */

/** What `yaml` makes of `text`: the data of a sound document, or undefined when it has anything to report. */
function reference(text: string): { data: unknown } | undefined {
  const lineCounter = new LineCounter();
  const doc = parseDocument(text, {
    lineCounter,
    schema: 'core',
    merge: true,
    uniqueKeys: true,
    prettyErrors: false,
    logLevel: 'error',
  });
  if (doc.errors.length > 0 || doc.warnings.length > 0) return undefined;
  let data: unknown;
  try {
    data = doc.toJS({ maxAliasCount: 100 });
  } catch {
    return undefined;
  }
  if (surprisingKeys(doc, lineCounter, 'm.yaml').length > 0) return undefined;
  return { data };
}

/** Holds the fast reader to `yaml` on `text`; returns whether it answered. */
function expectSameAsYaml(text: string): boolean {
  const fast = readYamlFast(text);
  if (fast === undefined) return false;
  const slow = reference(text);
  if (slow === undefined) throw new Error(`the fast reader answered where yaml reports a problem:\n${text}`);
  if (canonical(fast.data) !== canonical(slow.data)) {
    throw new Error(`the readers differ on:\n${text}\nfast: ${canonical(fast.data)}\nyaml: ${canonical(slow.data)}`);
  }
  return true;
}

function yamlFilesUnder(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return name === 'node_modules' ? [] : yamlFilesUnder(path);
    return /\.ya?ml$/.test(name) ? [path] : [];
  });
}

describe('the fast reader gives what yaml gives, or declines', () => {
  // Every YAML file in the project (examples, fixtures, the default config), each a test of its own:
  // the imported corpus configs are megabytes, each read whole by both readers.
  const files = [...yamlFilesUnder('examples'), ...yamlFilesUnder('test'), 'mockapi.yaml'];
  const answered: string[] = [];
  test.each(files)('on the project file %s', (file) => {
    if (expectSameAsYaml(readFileSync(file, 'utf8'))) answered.push(file);
  });
  test('the project files are there, and the valid ones, at least, take the fast way', () => {
    expect(files.length).toBeGreaterThan(40);
    expect(answered).toContain('mockapi.yaml');
    expect(answered.filter((file) => file.startsWith('examples')).length).toBeGreaterThan(3);
  });

  test.each([
    // scalars: YAML 1.2 core, as yaml reads them
    ['a: 0o17\nb: 0x1F\nc: 017\nd: +5\ne: -0\n', 'answers'], // values may read as other text; keys may not
    ['a: 1_000\nb: 0b101\nc: 12:30\nd: 1e3x\n', 'answers'], // strings in YAML 1.2 (js-yaml's own core types say numbers)
    ['a: 1.5\nb: .5\nc: 1e3\nd: -.inf\ne: .NaN\nf: 1.0\n', 'answers'],
    ['a: yes\nb: no\nc: on\nd: True\ne: FALSE\nf: ~\ng: Null\nh:\n', 'answers'],
    ["a: \"0123\"\nb: '~'\nc: \"\\u00e9\\t\\x41\"\nd: 'it''s'\n", 'answers'],
    ['a: |\n  line 1\n  line 2\nb: >-\n  folded\n  text\n\nc: >\n  x\n', 'answers'],
    ['c: |+\n  kept\n\n', 'declines'],
    ['a: plain\n  continued\n  lines\nb: "quoted\n  folded"\n', 'answers'],
    ['a: {"x": [1, 2, {"y": null}], "z": "w"}\nb: [a, "b", 3.5, true]\n', 'answers'],
    ['- a\n- - b\n  - c\n- {k: v}\n', 'answers'],
    ['a: 1 # comment\n# whole line\nb: "#not a comment"\nc: x#y\n', 'answers'],
    ['a: 1\r\nb: 2\r\n', 'answers'],
    ['\ufeffa: 1\n', 'declines'], // in a string; decoding file bytes drops it before either reader
    ['-\n  -\n- y\n', 'declines'], // js-yaml: [[null, y]]
    ['- - \n- y\n', 'declines'],
    ['e:\n  -\n    a: 1\n  -\n    a: 2\n', 'answers'],
    ['----\n', 'declines'],
    ['"q"#x\n', 'declines'],
    ['a: "x "#y\n', 'declines'],
    ['a: [1]#y\n', 'declines'],
    ['[#\n]\n', 'declines'], // yaml: a comment must follow white space
    ['a: [1,#x\n 2]\n', 'declines'],
    ['{#\n}\n', 'declines'],
    ['a: "#fff" # a colour\nb: {"c": "#000"}\n', 'answers'],
    ['{[a]}\n', 'declines'], // yaml: key "[ a ]"; js-yaml: "a"
    ['{x, {b: 1}}\n', 'declines'],
    ['[{a: 1}, [2], {b: [3]}]\n', 'answers'],
    ['a: >\n\n  \n # text\n', 'declines'],
    ['--- a\n', 'declines'],
    ['\t- 1\n', 'declines'],
    ['\n  - a\n- b\n', 'declines'],
    ['---\na: 1\n...\n', 'answers'],
    ['__proto__: {x: 1}\nconstructor: 2\n', 'answers'],
    // keys that are read as something other than their text
    ['0123: x\n', 'declines'],
    ['~: x\n', 'declines'],
    ['1.0: x\n', 'declines'],
    ['True: x\n', 'declines'],
    ['200: x\ntrue: y\n"0123": z\n', 'answers'],
    // everything the fast reader leaves to yaml
    ['a: &x {k: 1}\nb: *x\n', 'declines'],
    ['a: *x\n', 'declines'],
    ['a: !!str 5\n', 'declines'],
    ['a: !!int "5"\n', 'declines'],
    ['a: ! 5\n', 'declines'],
    ['%YAML 1.1\n---\na: yes\n', 'declines'],
    ['<<: {a: 1}\nb: 2\n', 'declines'],
    ['? [a, b]\n: 1\n', 'declines'],
    ['{[a]: 1}\n', 'declines'],
    ['a: 1\na: 2\n', 'declines'],
    ['a: 1\n---\nb: 2\n', 'declines'],
    ['a: [1, 2\n', 'declines'],
    ['a:\n\t- 1\n', 'declines'],
    ['', 'answers'],
    // text that only looks like those constructs (an imported GitHub config: URL templates, the
    // Prefer matchers' regular expressions, a licence and an ASCII-art body): read the fast way
    ['u: https://x/search?q={query}{&page,per_page}\nv: a{!b}\n', 'answers'],
    ['a: Gall & Gall\nb: [x & y]\n', 'answers'],
    ['a: & x\n', 'declines'],
    ['m: (^|[,;])\\s*code=("422"|422)\\s*($|[,;])\nn: a|+b\no: x >2\n', 'answers'],
    ['l:\n  body: |\n    \n\n    The MIT License\n\n    text\n', 'answers'],
    ['art:\n  body: |2\n         MMM.\n      M M\n  next: 1\n', 'answers'],
    ['- |2\n     x\n- >1-\n   y\n', 'answers'],
    // …and where they are the real thing
    ['a: [&x 1, *x]\n', 'declines'],
    ['a: {k: [!!str 1]}\n', 'declines'],
    ['a: {&x k: 1}\n', 'declines'],
    ['"a":[&x 1]\n', 'declines'],
    ['a: |\n      \n    x\n', 'declines'], // a leading empty line more indented than the content
    ['a: |\n  \t\n  x\n', 'declines'],
    ['a: |\n  \n', 'declines'],
    ['- - |\n   \n  x\n', 'declines'],
    ['art: |2\n     x\n   \n     y\n', 'declines'], // white space lines in an indicated block
    ['|1\n  x\n', 'declines'], // an indicated block at the root
    ['a:\n  |2\n    x\n', 'declines'],
    ['a: |2+\n   x\n\n', 'declines'],
  ])('%j %s', (text, expected) => {
    const answered = expectSameAsYaml(text);
    expect(answered ? 'answers' : 'declines').toBe(expected);
  });

  test('on the endpoints an OpenAPI import writes (GitHub-like answers): it answers', () => {
    const endpoint = {
      openapi: 'GET /search/code',
      method: 'GET',
      path: '/search/code',
      responses: [
        { name: 'code=404', when: preferCodeWhen(404), status: 404, body: { message: 'Not Found' } },
        { name: 'gone', when: preferWhen('gone (old)'), status: 200, body: { a: 1 } },
        {
          name: 'default',
          status: 200,
          body: {
            search_url: 'https://api.github.com/search/code?q={query}{&page,per_page,sort,order}',
            licence: '\nThe MIT License (MIT)\n\nCopyright (c) 2020\n',
            art: '           MMM.           .MMM\n           MMMMMMMMMMMMMMMMMMM\n',
            text: 'a | b > c, {d} [e] x&y=1',
          },
        },
      ],
    };
    const text = `apiKey: mk_x\nendpoints:\n${renderEndpoint('Search code', endpoint, 2, '\n')}`;
    // a config import wrote is read without positions: the positioned reader costs 5× the CPU and twice the memory
    expect(expectSameAsYaml(text)).toBe(true);
  });

  // Pieces of YAML, joined at random: most results are broken YAML, where the readers must agree
  // that the fast reader declines; the sound ones must give the same data.
  const piece = fc.oneof(
    {
      weight: 3,
      arbitrary: fc.constantFrom(
        '{[a]}',
        '{{}, s}',
        '[{a: 1}]',
        '{a: [1]}',
        'a',
        'b',
        'key',
        'body',
        '__proto__',
        'x y',
        '-x',
        '"q"',
        "'s'",
        '"a\\"b"',
        '"\\u00e9"',
        '"\\x41\\t"',
      ),
    },
    {
      weight: 5,
      arbitrary: fc.constantFrom(
        ':',
        ': ',
        '- ',
        '\n',
        '\n  ',
        '\n    ',
        '\n- ',
        '\n  - ',
        '\n-',
        '\n  -',
        '-',
        '[',
        ']',
        '{',
        '}',
        ', ',
        ',',
      ),
    },
    {
      weight: 2,
      arbitrary: fc.constantFrom(
        '&a ',
        '*a',
        '!!str ',
        '! ',
        '? ',
        '---\n',
        '...\n',
        '#',
        ' # c',
        '|\n  ',
        '|-\n  ',
        '>\n  ',
        '|1\n  ',
        '>2-\n   ',
        '|+\n ',
        '>\n\n  ',
        '|2\n   ',
        '|\n  \n  ',
        '{&a ',
        'x{&a ',
        '}{&',
        ' & ',
        '"|1',
        ':{',
        '<<: ',
        '%YAML 1.2\n',
      ),
    },
    {
      weight: 4,
      arbitrary: fc.constantFrom(
        '0',
        '-0',
        '+1',
        '0123',
        '0o17',
        '0x1f',
        '0b11',
        '1_0',
        '1.5',
        '.5',
        '1.',
        '1e3',
        '1E-2',
        '-.inf',
        '.NaN',
        '.nan',
        '~',
        'null',
        'Null',
        'NULL',
        'true',
        'True',
        'TRUE',
        'yes',
        'on',
        '12:30',
        '2026-01-01',
        '1.0',
        '00',
        '0.50',
      ),
    },
    {
      weight: 1,
      arbitrary: fc.constantFrom(
        '\t',
        '\r\n',
        ' ',
        '  ',
        '\ufeff',
        '\u0085',
        '\u2028',
        '\\',
        '@',
        '`',
        '%',
        '|',
        '>',
        "'",
        '"',
      ),
    },
    { weight: 2, arbitrary: fc.string({ maxLength: 5 }) },
  );
  const yamlish = fc.array(piece, { maxLength: 40 }).map((parts) => parts.join(''));

  test('on random YAML-looking text', () => {
    let answered = 0;
    fc.assert(
      fc.property(yamlish, (text) => {
        if (expectSameAsYaml(text)) answered++;
      }),
      { numRuns: 20_000 },
    );
    expect(answered).toBeGreaterThan(1000); // the property is not vacuous
  });

  test('on random data written by yaml in every style', () => {
    const options = fc.record({
      collectionStyle: fc.constantFrom('any', 'block', 'flow'),
      defaultStringType: fc.constantFrom('PLAIN', 'QUOTE_DOUBLE', 'QUOTE_SINGLE', 'BLOCK_LITERAL', 'BLOCK_FOLDED'),
      defaultKeyType: fc.constantFrom(null, 'PLAIN', 'QUOTE_DOUBLE'),
      lineWidth: fc.constantFrom(0, 20, 80),
      indent: fc.constantFrom(2, 4),
      indentSeq: fc.boolean(),
    });
    let answered = 0;
    fc.assert(
      fc.property(
        fc.jsonValue({ maxDepth: 4 }),
        options,
        fc.array(fc.nat(6), { minLength: 50, maxLength: 50 }),
        (value, opts, marks) => {
          // with comments and trailing spaces sprinkled over the lines
          const text = stringify(value, opts as never)
            .split('\n')
            .map(
              (line, i) =>
                [line, `${line} # c`, `# c\n${line}`, `${line}\n  # c`, `${line}  `][marks[i % 50] as number] ?? line,
            )
            .join('\n');
          if (expectSameAsYaml(text)) answered++;
        },
      ),
      { numRuns: 3000 },
    );
    expect(answered).toBeGreaterThan(1200);
  });
});
