// `mockapi import` on hostile descriptions, black-box: `$ref`s may only read files inside the
// description's folder (or a folder named with --allow-refs-under), never URLs; YAML alias bombs
// and oversized files are refused at once. Each refusal exits 1, names the problem and writes nothing.
import { describe, expect, test } from 'vitest';
import { mkdir, readFile, symlink, truncate, writeFile } from 'node:fs/promises';
import { execFileSync } from 'node:child_process';
import { join } from 'node:path';
import { runCli, useTempDir } from '../helpers/cli.js';

const temp = useTempDir('mockapi-import-hard-', { each: true });

const USER_CONFIG =
  'apiKey: mk_userKey000000000000000000000000\nendpoints:\n  - method: GET\n    path: /mine\n    response: { body: { mine: true } }\n';

/** A description whose one operation answers with `example`, given as YAML flow text. */
function describedWith(example: string): string {
  return [
    'openapi: 3.0.3',
    "info: { title: x, version: '1' }",
    'paths:',
    '  /a:',
    '    get:',
    '      responses:',
    "        '200':",
    '          description: ok',
    '          content:',
    '            application/json:',
    `              example: ${example}`,
    '',
  ].join('\n');
}

/** Writes `files` under the temp folder, a config holding USER_CONFIG, and imports `entry` into it. */
async function importInto(
  files: Record<string, string>,
  entry: string,
  extra: string[] = [],
  env?: Record<string, string>,
) {
  for (const [name, text] of Object.entries(files)) {
    await mkdir(join(temp.path, name, '..'), { recursive: true });
    await writeFile(join(temp.path, name), text);
  }
  const config = join(temp.path, 'mockapi.yaml');
  await writeFile(config, USER_CONFIG);
  const res = await runCli(['import', entry, '-c', config, ...extra], { cwd: temp.path, env, timeoutMs: 60_000 });
  return { res, config, text: await readFile(config, 'utf8') };
}

async function expectRefused(
  files: Record<string, string>,
  entry: string,
  message: string,
  extra: string[] = [],
): Promise<void> {
  const { res, config, text } = await importInto(files, entry, extra);
  expect(res).toEqual({ code: 1, stdout: '', stderr: `${message}\n${config} was left unchanged\n` });
  expect(text).toBe(USER_CONFIG);
}

describe('$refs stay inside the description folder', () => {
  test('a $ref to /proc/self/environ is refused and no environment text reaches the config or the output', async () => {
    const secret = 'ci_secret_value_5f2b9a';
    const { res, text } = await importInto(
      { 'api/main.yaml': describedWith("{ $ref: '/proc/self/environ' }") },
      'api/main.yaml',
      [],
      { CI_TOKEN: secret },
    );
    expect(res.code).toBe(1);
    expect(res.stderr).toMatch(
      /^\$ref `\/proc\/self\/environ` in api\/main\.yaml points to \/proc\/\S+\/environ, outside api\/; mockapi import reads only files inside the description's folder \(name another folder with --allow-refs-under <dir>\)\n/,
    );
    expect(res.stderr + res.stdout + text).not.toContain(secret);
    expect(text).toBe(USER_CONFIG);
  });

  test('a relative $ref that climbs out of the folder is refused; --allow-refs-under lets it in', async () => {
    const files = {
      'api/main.yaml': describedWith("{ $ref: '../shared/pet.yaml' }"),
      'shared/pet.yaml': 'name: Rex\n',
    };
    await expectRefused(
      files,
      'api/main.yaml',
      "$ref `../shared/pet.yaml` in api/main.yaml points to shared/pet.yaml, outside api/; mockapi import reads only files inside the description's folder (name another folder with --allow-refs-under <dir>)",
    );
    const { res, text } = await importInto(files, 'api/main.yaml', ['--allow-refs-under', 'shared']);
    expect(res.code).toBe(0);
    expect(text).toContain('name: Rex');
  });

  test('a symlink inside the folder to a file outside it is judged by where it really points', async () => {
    await mkdir(join(temp.path, 'api'));
    await writeFile(join(temp.path, 'outside.yaml'), 'token: leaked\n');
    await symlink(join(temp.path, 'outside.yaml'), join(temp.path, 'api', 'pet.yaml'));
    await expectRefused(
      { 'api/main.yaml': describedWith("{ $ref: './pet.yaml' }") },
      'api/main.yaml',
      "$ref `./pet.yaml` in api/main.yaml points to outside.yaml, outside api/; mockapi import reads only files inside the description's folder (name another folder with --allow-refs-under <dir>)",
    );
  });

  test('a $ref into a subfolder is followed as before', async () => {
    const { res, text } = await importInto(
      { 'main.yaml': describedWith("{ $ref: './parts/pet.yaml' }"), 'parts/pet.yaml': 'name: Rex\n' },
      'main.yaml',
    );
    expect(res.code).toBe(0);
    expect(text).toContain('name: Rex');
  });

  test('a $ref to something that is not a regular file (a FIFO would block the read forever) is refused', async () => {
    execFileSync('mkfifo', [join(temp.path, 'pipe.yaml')]);
    await expectRefused(
      { 'main.yaml': describedWith("{ $ref: './pipe.yaml' }") },
      'main.yaml',
      '$ref `./pipe.yaml` in main.yaml points to pipe.yaml, which is not a regular file',
    );
  });

  test('a URL $ref is refused without going to the network', () =>
    expectRefused(
      { 'main.yaml': describedWith("{ $ref: 'http://127.0.0.1:9/pet.yaml#/Pet' }") },
      'main.yaml',
      '$ref `http://127.0.0.1:9/pet.yaml` in main.yaml is a URL; mockapi import reads local files only (download it and point the $ref at the copy)',
    ));

  test('--allow-refs-under names a folder that must exist', async () => {
    const { res, text } = await importInto({ 'main.yaml': describedWith('{ ok: true }') }, 'main.yaml', [
      '--allow-refs-under',
      'nope',
    ]);
    expect(res).toMatchObject({
      code: 1,
      stdout: '',
      stderr: expect.stringContaining('--allow-refs-under nope: no such folder'),
    });
    expect(text).toBe(USER_CONFIG);
  });
});

describe('hostile or huge description files', () => {
  test('a YAML alias bomb is refused at once', async () => {
    const levels = ['a: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol","lol"]'];
    for (let i = 1; i < 9; i++) {
      const prev = String.fromCharCode(96 + i);
      const name = String.fromCharCode(97 + i);
      levels.push(`${name}: &${name} [${Array(10).fill(`*${prev}`).join(',')}]`);
    }
    const bomb = `${describedWith('*i').replace('paths:', `x-lol:\n${levels.map((l) => `  ${l}`).join('\n')}\npaths:`)}`;
    const { res, config, text } = await importInto({ 'bomb.yaml': bomb }, 'bomb.yaml');
    expect(res).toEqual({
      code: 1,
      stdout: '',
      stderr: `bomb.yaml: its YAML aliases expand to more than 100 MiB of data; refused as a possible alias bomb\n${config} was left unchanged\n`,
    });
    expect(text).toBe(USER_CONFIG);
  }, 20_000);

  test('a few aliases of a large anchor are refused by the size they expand to', async () => {
    const big = `"${'x'.repeat(2 * 1024 * 1024)}"`;
    const bomb = describedWith(`[${Array(60).fill('*big').join(',')}]`).replace('paths:', `x-big: &big ${big}\npaths:`);
    await expectRefused(
      { 'big.yaml': bomb },
      'big.yaml',
      'big.yaml: its YAML aliases expand to more than 100 MiB of data; refused as a possible alias bomb',
    );
  });

  test('a description file over 50 MiB is refused before it is read', async () => {
    await writeFile(join(temp.path, 'huge.yaml'), describedWith('{ ok: true }'));
    await truncate(join(temp.path, 'huge.yaml'), 50 * 1024 * 1024 + 1);
    await expectRefused(
      {},
      'huge.yaml',
      'huge.yaml is larger than 50 MiB; mockapi import reads descriptions of up to 50 MiB per file',
    );
  });

  test('so is a $ref to a file over 50 MiB', async () => {
    await writeFile(join(temp.path, 'huge.yaml'), 'x: 1\n');
    await truncate(join(temp.path, 'huge.yaml'), 50 * 1024 * 1024 + 1);
    await expectRefused(
      { 'main.yaml': describedWith("{ $ref: './huge.yaml' }") },
      'main.yaml',
      'huge.yaml is larger than 50 MiB; mockapi import reads descriptions of up to 50 MiB per file',
    );
  });
});
