import { mkdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { describe, expect, test } from 'vitest';
import { runInit } from '../../src/cli/commands/init.js';
import { runValidate } from '../../src/cli/commands/validate.js';
import type { CommandIO } from '../../src/cli/commands/io.js';
import { loadConfig } from '../../src/config/load.js';
import { tempDirSync } from '../helpers/cli.js';

function collect(): CommandIO & { outLines: string[]; errLines: string[] } {
  const outLines: string[] = [];
  const errLines: string[] = [];
  return { outLines, errLines, out: (l) => outLines.push(l), err: (l) => errLines.push(l) };
}

const tempDir = (name = 'shop-api') => {
  const dir = join(tempDirSync('mockapi-cmd-'), name);
  mkdirSync(dir);
  return dir;
};

describe('mockapi validate', () => {
  test('a valid file: one line on stdout, exit 0', async () => {
    const io = collect();
    const file = 'test/fixtures/valid/spec-example.yaml';
    expect(await runValidate({ config: file }, io)).toBe(0);
    expect(io.outLines).toEqual([`${file} is valid (2 endpoints)`]);
    expect(io.errLines).toEqual([]);
  });

  test('singular for one endpoint, plural for none', async () => {
    const dir = tempDir();
    writeFileSync(join(dir, 'one.yaml'), 'apiKey: k\nendpoints:\n  - { method: GET, path: / }\n');
    const io = collect();
    expect(await runValidate({ config: join(dir, 'one.yaml') }, io)).toBe(0);
    expect(io.outLines).toEqual([`${join(dir, 'one.yaml')} is valid (1 endpoint)`]);
    const io2 = collect();
    expect(await runValidate({ config: 'test/fixtures/valid/minimal.yaml' }, io2)).toBe(0);
    expect(io2.outLines).toEqual(['test/fixtures/valid/minimal.yaml is valid (0 endpoints)']);
  });

  test('an invalid file: every issue on stderr, nothing on stdout, exit 1', async () => {
    const io = collect();
    const file = 'test/fixtures/invalid/server-values.yaml';
    expect(await runValidate({ config: file }, io)).toBe(1);
    expect(io.outLines).toEqual([]);
    expect(io.errLines).toEqual([
      `${file}:3:9: server.port must be between 0 and 65535, got 70000`,
      `${file}:4:9: server.host must be a host name or IP address without spaces, such as 127.0.0.1 or 0.0.0.0, got ""`,
      `${file}:5:9: server.cors must be true or false, got "yes"`,
      `${file}:6:16: server.maxBodySize must be a size: whole bytes (1048576) or a number with a unit (512kb, 2mb, 1gb), got "lots"`,
    ]);
  });

  test('a missing file: one line, exit 1', async () => {
    const io = collect();
    expect(await runValidate({ config: 'nope/mockapi.yaml' }, io)).toBe(1);
    expect(io.errLines).toEqual(['nope/mockapi.yaml: config file not found (`mockapi init` writes a starter)']);
  });
});

describe('mockapi init', () => {
  test('writes a starter that validates, with a fresh key and the schema modeline', async () => {
    const dir = tempDir();
    const file = join(dir, 'mockapi.yaml');
    const io = collect();
    expect(await runInit({ config: file }, io)).toBe(0);
    expect(io.errLines).toEqual([]);
    // Not the ./mockapi.yaml of the working folder: the command names it.
    expect(io.outLines).toEqual([
      `Created ${file} with a new API key. Start the mock with: npx mockapi-cli serve -c ${file}`,
    ]);
    const text = readFileSync(file, 'utf8');
    expect(text.split('\n')[0]).toBe(
      '# yaml-language-server: $schema=./node_modules/mockapi-cli/schema/mockapi.schema.json',
    );
    const result = await loadConfig(file);
    if (!result.ok) throw new Error(JSON.stringify(result.issues));
    expect(result.config.project).toBe('shop-api');
    expect(result.config.apiKey).toMatch(/^mk_[0-9A-Za-z]{32}$/);
    expect(result.config.endpoints.length).toBeGreaterThanOrEqual(3);
    expect(result.config.limits.rateLimit).toBeDefined();
    expect(statSync(file).mode & 0o777).toBe(0o644);
    expect(text.match(/^\s*#/gm)?.length).toBeGreaterThan(5); // explained with comments
  });

  test('refuses to overwrite without --force and leaves the file alone', async () => {
    const dir = tempDir();
    const file = join(dir, 'mockapi.yaml');
    writeFileSync(file, 'apiKey: mine\n');
    const io = collect();
    expect(await runInit({ config: file }, io)).toBe(1);
    expect(io.errLines).toEqual([`${file} already exists; use --force to overwrite it (its API key will be replaced)`]);
    expect(io.outLines).toEqual([]);
    expect(readFileSync(file, 'utf8')).toBe('apiKey: mine\n');
  });

  test('--force overwrites, with a new key each time', async () => {
    const dir = tempDir();
    const file = join(dir, 'mockapi.yaml');
    writeFileSync(file, 'apiKey: mine\n');
    expect(await runInit({ config: file, force: true }, collect())).toBe(0);
    const first = await loadConfig(file);
    expect(await runInit({ config: file, force: true }, collect())).toBe(0);
    const second = await loadConfig(file);
    if (!first.ok || !second.ok) throw new Error('starter does not validate');
    expect(first.config.apiKey).not.toBe('mine');
    expect(second.config.apiKey).not.toBe(first.config.apiKey);
  });

  test('a folder, or a folder that does not exist, is a clear error', async () => {
    const dir = tempDir();
    const io = collect();
    expect(await runInit({ config: dir, force: true }, io)).toBe(1);
    expect(io.errLines).toEqual([`${dir} is a folder; give a file name with --config`]);
    const io2 = collect();
    const missing = join(dir, 'no', 'such', 'mockapi.yaml');
    expect(await runInit({ config: missing }, io2)).toBe(1);
    expect(io2.errLines).toEqual([`cannot write ${missing}: the folder ${join(dir, 'no', 'such')} does not exist`]);
  });

  test('points the modeline at the installed schema when mockapi-cli is in node_modules above', async () => {
    const root = tempDir('project');
    mkdirSync(join(root, 'node_modules', 'mockapi-cli', 'schema'), { recursive: true });
    writeFileSync(join(root, 'node_modules', 'mockapi-cli', 'schema', 'mockapi.schema.json'), '{}');
    mkdirSync(join(root, 'mocks'));
    const file = join(root, 'mocks', 'api.yaml');
    expect(await runInit({ config: file }, collect())).toBe(0);
    expect(readFileSync(file, 'utf8').split('\n')[0]).toBe(
      '# yaml-language-server: $schema=../node_modules/mockapi-cli/schema/mockapi.schema.json',
    );
    expect((await loadConfig(file)).ok).toBe(true);
  });

  test('a folder name YAML would misread still gives a valid project name', async () => {
    for (const name of ['123', 'true', 'my api: v2', '#hash']) {
      const dir = tempDir(name);
      const file = join(dir, 'mockapi.yaml');
      expect(await runInit({ config: file }, collect())).toBe(0);
      const result = await loadConfig(resolve(file));
      expect(result.ok && result.config.project).toBe(name);
    }
  });
});
