import { readdirSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import fc from 'fast-check';
import { parseDocument } from 'yaml';
import { describe, expect, test } from 'vitest';
// @ts-expect-error -- a build script without type declarations
import { createAjv, generateValidatorSource, GENERATED_FILE, readSchema } from '../../scripts/build-schema.mjs';
import { validateSchema } from '../../src/config/schema-validator.generated.js';
import { parseDuration, parseFailRate, parseSize } from '../../src/config/units.js';

type Schema = Record<string, unknown>;
const schema = readSchema() as Schema;

describe('the generated validator', () => {
  test('is up to date with schema/mockapi.schema.json (run `npm run build` when this fails)', () => {
    expect(readFileSync(GENERATED_FILE, 'utf8')).toBe(generateValidatorSource(schema));
  });

  test('does not need ajv at run time', () => {
    const source = readFileSync(GENERATED_FILE, 'utf8');
    expect(source).not.toMatch(/\brequire\(|from ['"]ajv/);
  });

  test('agrees with ajv compiling the schema, on every fixture', () => {
    const validate = createAjv().compile(schema);
    const dirs = ['test/fixtures/invalid', 'test/fixtures/valid'].map((d) => resolve(d));
    let compared = 0;
    for (const dir of dirs) {
      for (const name of readdirSync(dir).filter((f) => f.endsWith('.yaml'))) {
        const doc = parseDocument(readFileSync(join(dir, name), 'utf8'), { logLevel: 'error' });
        let data: unknown;
        try {
          data = doc.toJS({ maxAliasCount: 100 });
        } catch {
          continue;
        }
        const summary = (errors: Array<{ keyword: string; instancePath: string }> | null | undefined) =>
          (errors ?? []).map((e) => `${e.keyword} ${e.instancePath}`);
        expect(validateSchema(data), name).toBe(validate(data));
        expect(summary(validateSchema.errors), name).toEqual(summary(validate.errors));
        compared++;
      }
    }
    expect(compared).toBeGreaterThan(40);
  });
});

describe('the schema as user documentation', () => {
  function walk(node: unknown, where: string, visit: (schema: Schema, where: string) => void): void {
    if (node === null || typeof node !== 'object') return;
    const s = node as Schema;
    visit(s, where);
    for (const [name, child] of Object.entries((s.properties as Schema | undefined) ?? {}))
      walk(child, `${where}.${name}`, visit);
    if (s.items !== undefined) walk(s.items, `${where}[]`, visit);
  }

  test('every property (and list item) has a description', () => {
    const missing: string[] = [];
    let count = 0;
    walk(schema, '', (s, where) => {
      count++;
      if (typeof s.description !== 'string' || s.description.length < 20) missing.push(where || '(root)');
    });
    expect(missing).toEqual([]);
    expect(count).toBeGreaterThan(25);
  });

  test('objects refuse unknown fields', () => {
    const open: string[] = [];
    walk(schema, '', (s, where) => {
      if (s.properties !== undefined && s.additionalProperties !== false) open.push(where || '(root)');
    });
    expect(open).toEqual([]);
  });

  test('the package exports it', () => {
    const pkg = JSON.parse(readFileSync('package.json', 'utf8')) as {
      exports: Record<string, string>;
      files: string[];
    };
    expect(pkg.exports['./schema.json']).toBe('./schema/mockapi.schema.json');
    expect(pkg.files).toContain('schema');
  });
});

describe('the schema patterns and the unit parsers agree', () => {
  function patternOf(...path: string[]): RegExp {
    let node: unknown = schema;
    for (const key of path) node = (node as Schema)[key];
    return new RegExp((node as Schema).pattern as string, 'u');
  }
  const endpoint = ['properties', 'endpoints', 'items', 'properties'];
  const delay = patternOf(...endpoint, 'delay');
  const window = patternOf('properties', 'limits', 'properties', 'rateLimit', 'properties', 'window');
  const failRate = patternOf(...endpoint, 'failRate');
  const size = patternOf('properties', 'server', 'properties', 'maxBodySize');
  const text = fc.oneof(fc.string(), fc.stringMatching(/^[0-9]{0,4}(\.[0-9]{0,3})?(ms|s|m|h|b|kb|Kb|mB|GB|%|x)?$/));

  test('a string the parser accepts matches the pattern (so editors never flag a valid value)', () => {
    fc.assert(
      fc.property(text, (v) => {
        if (parseDuration(v) !== undefined) expect(delay.test(v) && window.test(v)).toBe(true);
        if (parseSize(v) !== undefined) expect(size.test(v)).toBe(true);
        if (parseFailRate(v) !== undefined) expect(failRate.test(v)).toBe(true);
      }),
      { numRuns: 3000 },
    );
  });

  test('a percentage the pattern accepts is one the parser accepts', () => {
    fc.assert(
      fc.property(text, (v) => {
        if (failRate.test(v)) expect(parseFailRate(v)).toBeDefined();
      }),
      { numRuns: 3000 },
    );
  });
});
