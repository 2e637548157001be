// docs/resources.md's walk-through, run as written: its config served (with its own --clock), each
// shell command run in order (the port the server got in place of 4010, the built CLI in place of
// `npx mockapi-cli`), each output compared with the block the page shows after it.
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, test } from 'vitest';
import { BIN, ROOT, startServe, stopAll, tempDir, writeConfig } from '../../helpers/cli.js';

afterAll(stopAll);

interface Block {
  lang: string;
  text: string;
}

function blocks(markdown: string): Block[] {
  return [...markdown.matchAll(/^```(\w*)\n([\s\S]*?)^```$/gm)].map((m) => ({
    lang: m[1] as string,
    text: m[2] as string,
  }));
}

describe('docs/resources.md', () => {
  test('the Stripe walk-through runs as written and prints what the page shows', async () => {
    const page = blocks(readFileSync(join(ROOT, 'docs', 'resources.md'), 'utf8'));
    const config = page.find((b) => b.lang === 'yaml');
    expect(config).toBeDefined();
    const dir = await tempDir();
    await writeConfig(dir, config!.text);
    const start = page.findIndex((b) => b.lang === 'sh');
    const serve = page[start]!.text.trim();
    expect(serve).toBe('npx mockapi-cli serve --clock 2026-01-01T00:00:00Z');
    const startedAt = Date.now();
    const server = await startServe(['--clock', '2026-01-01T00:00:00Z'], { cwd: dir });
    const port = new URL(server.url).port;
    let run = 0;
    for (let i = start + 1; i < page.length; i++) {
      const block = page[i]!;
      if (block.lang !== 'sh') continue;
      const expected = page[i + 1];
      if (expected === undefined || (expected.lang !== 'json' && expected.lang !== 'text')) continue;
      const script = block.text
        .replaceAll('127.0.0.1:4010', `127.0.0.1:${port}`)
        .replaceAll('npx mockapi-cli', `${process.execPath} ${BIN}`);
      const out = execFileSync('bash', ['-c', script], {
        cwd: dir,
        encoding: 'utf8',
        env: { ...process.env, NO_COLOR: '1' },
      }).trim();
      const shown = expected.text.trim();
      if (shown.startsWith('{"now":')) {
        // The clock runs on in real time from its start, so the page's 00:00:02.000 is 2 s plus
        // however long the server has been up (longer on a loaded machine): within those bounds.
        expect(out).toMatch(/^\{"now":"2026-01-01T\d\d:\d\d:\d\d\.\d{3}Z"\}$/);
        const ran = Date.parse((JSON.parse(out) as { now: string }).now) - Date.parse('2026-01-01T00:00:00Z');
        expect(ran).toBeGreaterThanOrEqual(2_000);
        expect(ran).toBeLessThanOrEqual(2_000 + (Date.now() - startedAt));
      } else expect(out, block.text).toBe(shown);
      run++;
    }
    expect(run).toBeGreaterThanOrEqual(12);
  });
});
