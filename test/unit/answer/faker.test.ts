import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { promisify } from 'node:util';
import { beforeAll, describe, expect, it } from 'vitest';
import {
  compileString,
  compileTemplate,
  createAnswerRandom,
  FAKER_API,
  loadFaker,
} from '../../../src/expression/index.js';
import { FAKER_REFUSED } from '../../../src/expression/faker-api.js';
import { makeContext } from '../../helpers/answer.js';

const run = promisify(execFile);
const root = fileURLToPath(new URL('../../..', import.meta.url));

beforeAll(async () => {
  await loadFaker();
});

const person = compileTemplate({
  name: '${fake.person.fullName()}',
  email: '${fake.internet.email()}',
  city: 'in ${fake.location.city()}',
});
if (!person.ok) throw new Error('template did not compile');
const answer = (seed: number, by: number | string): unknown =>
  person.value.evaluate(makeContext({ random: createAnswerRandom(seed, 'GET /users/:id', by) }));

describe('fake.* values are seeded', () => {
  it('the same seed, endpoint and n give the same fake values', () => {
    expect(answer(1, 5)).toEqual(answer(1, 5));
    expect(answer(1, 5)).toMatchObject({
      name: expect.any(String),
      email: expect.stringContaining('@'),
      city: expect.stringMatching(/^in \S/),
    });
  });

  it('another n, seed or seedBy value gives other values', () => {
    expect(answer(1, 5)).not.toEqual(answer(1, 6));
    expect(answer(1, 5)).not.toEqual(answer(2, 5));
    expect(answer(1, 'user-7')).toEqual(answer(1, 'user-7'));
    expect(answer(1, 'user-7')).not.toEqual(answer(1, 'user-8'));
  });

  it('values do not depend on requests evaluated in between', () => {
    const first = answer(3, 1);
    answer(3, 2);
    answer(4, 9);
    expect(answer(3, 1)).toEqual(first);
  });

  it('each $repeat item gets its own values', () => {
    const list = compileTemplate({ $repeat: 5, $item: '${fake.person.firstName()} ${index}' });
    if (!list.ok) throw new Error('list did not compile');
    const items = list.value.evaluate(makeContext()) as string[];
    expect(items).toHaveLength(5);
    expect(new Set(items.map((item) => item.split(' ')[0])).size).toBeGreaterThan(1);
  });
});

describe('fake.* results are JSON values', () => {
  const one = (text: string): unknown => {
    const result = compileString(text);
    if (!result.ok) throw new Error(result.issue.message);
    return result.value.evaluate(makeContext());
  };

  it.each<[string, (value: unknown) => boolean]>([
    ['${fake.date.past()}', (v) => typeof v === 'string' && v < '2025-01-01T00:00:00.000Z' && v > '2023-12-31'],
    ['${fake.number.bigInt()}', (v) => typeof v === 'string' && /^\d+$/.test(v)],
    ['${fake.number.int(10)}', (v) => typeof v === 'number' && v >= 0 && v <= 10],
    ['${fake.number.int({ min: 5, max: 6 })}', (v) => v === 5 || v === 6],
    ["${fake.helpers.arrayElement(['a', 'b'])}", (v) => v === 'a' || v === 'b'],
    ['${fake.location.nearbyGPSCoordinate()}', (v) => Array.isArray(v) && v.length === 2],
    ['${fake.number.int({ min: 10, max: 1 })}', (v) => v === null], // faker refuses: nothing
  ])('%s', (text, check) => {
    expect(check(one(text))).toBe(true);
  });

  it('arguments are rebuilt per call: helpers.shuffle does not disturb later answers', () => {
    const shuffle = compileString('${fake.helpers.shuffle([1, 2, 3, 4, 5, 6])}');
    if (!shuffle.ok) throw new Error('did not compile');
    const first = shuffle.value.evaluate(makeContext());
    shuffle.value.evaluate(makeContext({ request: 2 }));
    expect(shuffle.value.evaluate(makeContext())).toEqual(first);
  });
});

describe('FAKER_API', () => {
  it('lists exactly the own functions of the installed faker modules, minus the refused ones', async () => {
    const { faker } = await import('@faker-js/faker/locale/en');
    const installed = new Map<string, string[]>();
    for (const [module, value] of Object.entries(faker)) {
      if (value === null || typeof value !== 'object') continue;
      const methods = Object.keys(value).filter(
        (key) =>
          typeof (value as Record<string, unknown>)[key] === 'function' &&
          !Object.hasOwn(FAKER_REFUSED, `${module}.${key}`),
      );
      if (methods.length > 0) installed.set(module, methods.sort());
    }
    const listed = new Map([...FAKER_API].map(([module, methods]) => [module, [...methods].sort()]));
    expect(listed).toEqual(installed);
  });
});

describe('faker is loaded lazily', () => {
  it('importing and using src/answer without fake. never loads @faker-js/faker', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'mockapi-faker-'));
    try {
      const hooks = join(dir, 'hooks.mjs');
      writeFileSync(
        hooks,
        `export async function resolve(specifier, context, next) {
  if (specifier.includes('@faker-js/faker')) throw new Error('FAKER_RESOLVED ' + specifier);
  return next(specifier, context);
}\n`,
      );
      const register = join(dir, 'register.mjs');
      writeFileSync(
        register,
        `import { register } from 'node:module';\nregister(${JSON.stringify(pathToFileURL(hooks).href)});\n`,
      );
      const script = join(dir, 'child.mjs');
      writeFileSync(
        script,
        `const answer = await import(${JSON.stringify(pathToFileURL(join(root, 'dist/expression/index.js')).href)});
const plain = answer.compileTemplate({ id: '\${uuid()}', n: '\${request}' });
const fake = answer.compileTemplate({ name: '\${fake.person.fullName()}' });
const ctx = { params: {}, query: {}, headers: {}, cookies: {}, body: undefined, request: 1, state: {}, now: 0, random: answer.createAnswerRandom(1, 'GET /x', 1) };
const out = { plain: plain.value.evaluate(ctx).n, usesFaker: [plain.value.usesFaker, fake.value.usesFaker], loadedBeforePrepare: answer.isFakerLoaded() };
try { await answer.loadFaker(); out.prepare = 'loaded'; } catch (error) { out.prepare = String(error.message).split(' ')[0]; }
console.log(JSON.stringify(out));
`,
      );
      const { stdout } = await run(process.execPath, ['--import', pathToFileURL(register).href, script]);
      // The hook refuses faker: compiling and evaluating worked without it, and loadFaker() is
      // what first asked for it (proving the hook sees the import).
      expect(JSON.parse(stdout)).toEqual({
        plain: 1,
        usesFaker: [false, true],
        loadedBeforePrepare: false,
        prepare: 'FAKER_RESOLVED',
      });
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
