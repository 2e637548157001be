// The documentation a user reads holds together: README.md is a short landing page, every relative
// link in README.md, CONTRIBUTING.md and docs/ reaches a file (and a heading) that exists, every
// command's --help ends with examples, every flag of a command's --help is in its section of
// docs/cli.md, and nothing a user reads — README, docs/, --help, the
// shipped type declarations and the JSON Schema — cites the internal contract by section ("SPEC",
// "§"): it states the rule instead.
import type { Command } from 'commander';
import { describe, expect, test } from 'vitest';
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join, relative, resolve } from 'node:path';
import { gzipSync } from 'node:zlib';
import { ROOT, runCli } from '../helpers/cli.js';

/** Files under `dir` (relative to ROOT) whose name passes `keep`, walking sub-folders. */
function filesUnder(dir: string, keep: (name: string) => boolean): string[] {
  const found: string[] = [];
  const walk = (at: string): void => {
    for (const entry of readdirSync(join(ROOT, at), { withFileTypes: true })) {
      const path = join(at, entry.name);
      if (entry.isDirectory()) walk(path);
      else if (keep(entry.name)) found.push(path);
    }
  };
  walk(dir);
  return found.sort();
}

const PAGES = ['README.md', 'CONTRIBUTING.md', ...filesUnder('docs', (name) => name.endsWith('.md'))];
const COMMANDS = ['serve', 'rotate-key', 'validate', 'init', 'import', 'usage', 'requests', 'verify'];
/** A reference to the internal contract: the word SPEC, or a section sign. */
const CONTRACT_REFERENCE = /\bSPEC\b|§/;

/** Markdown without fenced code blocks and inline code, where `[x](y)` is not a link. */
function prose(markdown: string): string {
  return markdown.replace(/^```[^\n]*\n[\s\S]*?^```$/gm, '').replace(/`[^`\n]*`/g, '');
}

/** GitHub's anchor for a heading: lower case, punctuation dropped, spaces to hyphens. */
function slug(heading: string): string {
  return heading
    .replace(/`/g, '')
    .toLowerCase()
    .replace(/[^\p{L}\p{N}\p{M} _-]/gu, '')
    .replace(/ /g, '-');
}

/** The anchors of a Markdown file's headings (repeats get -1, -2… as on GitHub). */
function anchors(markdown: string): Set<string> {
  const seen = new Map<string, number>();
  const out = new Set<string>();
  for (const [, text] of markdown.replace(/^```[^\n]*\n[\s\S]*?^```$/gm, '').matchAll(/^#{1,6} (.+)$/gm)) {
    const base = slug(text!.trim());
    const n = seen.get(base) ?? 0;
    seen.set(base, n + 1);
    out.add(n === 0 ? base : `${base}-${n}`);
  }
  return out;
}

/** Every relative link of a page: its target path (from ROOT) and anchor. */
function relativeLinks(page: string): { target: string; anchor: string | undefined; written: string }[] {
  const text = prose(readFileSync(join(ROOT, page), 'utf8'));
  const links = [];
  for (const [, written] of text.matchAll(/!?\[[^\]]*\]\(([^)\s]+)\)/g)) {
    if (/^[a-z][a-z0-9+.-]*:/i.test(written!)) continue; // https:, mailto:…
    const [path, anchor] = written!.split('#') as [string, string | undefined];
    const target = path === '' ? page : relative(ROOT, resolve(ROOT, dirname(page), decodeURIComponent(path)));
    links.push({ target, anchor, written: written! });
  }
  return links;
}

describe('README.md', () => {
  test('is a landing page: at most 300 lines', () => {
    expect(readFileSync(join(ROOT, 'README.md'), 'utf8').split('\n').length).toBeLessThanOrEqual(300);
  });

  test('starts with npx mockapi-cli, never with npx mockapi (an unrelated package on the registry)', () => {
    const commands = [...readFileSync(join(ROOT, 'README.md'), 'utf8').matchAll(/^```sh\n([\s\S]*?)^```$/gm)]
      .map((m) => m[1]!)
      .join('');
    expect(commands).toContain('npx mockapi-cli init');
    expect(commands.match(/npx mockapi(?!-cli)\b/g)).toBeNull();
  });

  test('every YAML example is a valid config', async () => {
    const blocks = [...readFileSync(join(ROOT, 'README.md'), 'utf8').matchAll(/^```yaml\n([\s\S]*?)^```$/gm)].map(
      (m) => m[1]!,
    );
    expect(blocks.length).toBeGreaterThanOrEqual(3);
    const dir = await mkdtemp(join(tmpdir(), 'mockapi-readme-'));
    try {
      await writeFile(join(dir, 'order.json'), '{"id":1001}');
      for (const [i, block] of blocks.entries()) {
        // Fragments show the part they are about; a key and the fixture make them whole.
        const text = (/^apiKey:/m.test(block) ? block : `apiKey: mk_readme000000000000000000000000\n${block}`).replace(
          'fixtures/order.json',
          'order.json',
        );
        await writeFile(join(dir, `block-${i}.yaml`), text);
        const result = await runCli(['validate', '-c', `block-${i}.yaml`], { cwd: dir });
        expect({ block, stderr: result.stderr, code: result.code }).toEqual({ block, stderr: '', code: 0 });
      }
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});

describe('figures the pages give', () => {
  test("the inspector page's size in docs/inspector.md is the built page's, gzipped, within 1 KiB", () => {
    const said = /one self-contained HTML file \(about (\d+) KiB gzipped\)/.exec(
      readFileSync(join(ROOT, 'docs', 'inspector.md'), 'utf8'),
    );
    expect(said).not.toBeNull();
    const built = gzipSync(readFileSync(join(ROOT, 'dist', 'inspector', 'inspector.html')), { level: 9 }).length / 1024;
    expect(Math.abs(Number(said![1]) - built)).toBeLessThanOrEqual(1);
  });
});

describe('code examples', () => {
  test.each(PAGES)(
    '%s: an example that rotates the key serves a copy of the config, not the committed file',
    (page) => {
      // rotateKey() writes the new key into the file the server serves: followed literally, an
      // example serving ./mockapi.yaml would rewrite the key committed with the app.
      const blocks = [...readFileSync(join(ROOT, page), 'utf8').matchAll(/^```ts\n([\s\S]*?)^```$/gm)].map(
        (m) => m[1]!,
      );
      if (!blocks.some((block) => block.includes('rotateKey('))) return;
      // The setup that hands the server to those tests (vitest's project.provide of what they inject) is the one to check.
      const injected = blocks
        .filter((block) => block.includes('rotateKey('))
        .flatMap((block) => [...block.matchAll(/inject\('([^']+)'\)/g)].map((m) => m[1]!));
      const setups = blocks.filter(
        (block) => block.includes('rotateKey(') || injected.some((key) => block.includes(`project.provide('${key}'`)),
      );
      expect(setups.filter((block) => /startMockServer\(\{\s*config:\s*['"]\.\/mockapi\.yaml['"]/.test(block))).toEqual(
        [],
      );
    },
  );
});

describe('links', () => {
  test('there are pages to check', () => {
    expect(PAGES).toEqual(
      expect.arrayContaining(['README.md', 'docs/README.md', 'docs/config.md', 'docs/internals/dependencies.md']),
    );
  });

  test.each(PAGES)('every relative link of %s reaches an existing file and heading', (page) => {
    const broken: string[] = [];
    for (const { target, anchor, written } of relativeLinks(page)) {
      if (target.startsWith('..') || !existsSync(join(ROOT, target))) {
        broken.push(`${written}: no such file`);
        continue;
      }
      if (
        anchor === undefined ||
        anchor === '' ||
        statSync(join(ROOT, target)).isDirectory() ||
        !target.endsWith('.md')
      )
        continue;
      if (!anchors(readFileSync(join(ROOT, target), 'utf8')).has(anchor))
        broken.push(`${written}: no heading #${anchor} in ${target}`);
    }
    expect(broken).toEqual([]);
  });

  test('the dependency table is reachable from the README', () => {
    expect(relativeLinks('README.md').map((l) => l.target)).toContain('docs/internals/dependencies.md');
  });

  test('what the pages link to ships in the package (package.json "files")', () => {
    const files = (JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { files: string[] }).files;
    const shipped = (path: string) => files.some((entry) => path === entry || path.startsWith(`${entry}/`));
    const userPages = PAGES.filter((page) => page === 'README.md' || page.startsWith('docs/'));
    const unshipped = userPages.flatMap((page) =>
      relativeLinks(page)
        .filter((l) => !shipped(l.target))
        .map((l) => `${page}: ${l.written}`),
    );
    expect(unshipped).toEqual([]);
    expect(userPages.every(shipped)).toBe(true);
  });
});

describe('no reference to the internal contract by section', () => {
  test.each(PAGES)('%s', (page) => {
    const lines = readFileSync(join(ROOT, page), 'utf8').split('\n');
    expect(lines.filter((line) => CONTRACT_REFERENCE.test(line))).toEqual([]);
  });

  test('the shipped type declarations (dist/**/*.d.ts)', () => {
    const found = filesUnder('dist', (name) => name.endsWith('.d.ts')).flatMap((file) =>
      readFileSync(join(ROOT, file), 'utf8')
        .split('\n')
        .filter((line) => CONTRACT_REFERENCE.test(line))
        .map((line) => `${file}: ${line.trim()}`),
    );
    expect(found).toEqual([]);
  });

  test('the JSON Schema (editors show its descriptions)', () => {
    const schema = readFileSync(join(ROOT, 'schema', 'mockapi.schema.json'), 'utf8');
    expect(schema.split('\n').filter((line) => CONTRACT_REFERENCE.test(line))).toEqual([]);
  });

  test.each(['--help', ...COMMANDS.map((c) => `${c} --help`)])('mockapi %s', async (args) => {
    const help = await runCli(args.split(' '));
    expect(help.code).toBe(0);
    expect(help.stdout).not.toMatch(CONTRACT_REFERENCE);
  });
});

describe('docs/cli.md', () => {
  /** Commands whose flags another page documents (anywhere on it), where docs/cli.md links. */
  const ELSEWHERE: Record<string, string> = {
    import: 'docs/openapi.md',
    'webhooks list': 'docs/webhooks.md',
    'webhooks trigger': 'docs/webhooks.md',
  };

  test("each command's flag table lists every flag its --help lists", async () => {
    // The program's own options (createProgram is pure: nothing runs) against the section under
    // each `## \`mockapi <command>\`` heading: its table's first column where it has a table (a
    // flag only mentioned in the prose, as rotate-key's `--name ci` was, is not in the table), else
    // its text. -c and -h are every command's, said once at the top of the page.
    const { createProgram } = await import('../../src/cli/cli.js');
    const sections = new Map<string, string>();
    for (const part of readFileSync(join(ROOT, 'docs', 'cli.md'), 'utf8').split(/^(?=## )/m)) {
      const heading = /^## `mockapi ((?:[\w-]+ )*)([\w|-]+)`/.exec(part);
      if (heading === null) continue;
      const cells = [...part.matchAll(/^\|([^|\n]*(?:\\\|[^|\n]*)*)\|/gm)].map((m) => m[1]!);
      const text = cells.length > 0 ? cells.join('\n') : part;
      // `tls env|path` is one command, `tls <what>`; `resources list` a subcommand of `resources`.
      const names = heading[2]!.includes('|') ? [heading[1]!.trim()] : [`${heading[1]}${heading[2]}`];
      for (const name of names) sections.set(name, text);
    }
    const leaves = (command: Command, path: string[]): Array<[string, Command]> =>
      command.commands.length === 0
        ? [[path.join(' '), command]]
        : command.commands.flatMap((c) => leaves(c, [...path, c.name()]));
    const missing: string[] = [];
    for (const [name, command] of leaves(
      createProgram(() => {}),
      [],
    )) {
      const elsewhere = ELSEWHERE[name];
      const section =
        sections.get(name) ?? (elsewhere === undefined ? undefined : readFileSync(join(ROOT, elsewhere), 'utf8'));
      if (section === undefined) {
        missing.push(`mockapi ${name}: no section`);
        continue;
      }
      for (const option of command.options) {
        if (option.long === '--config' || option.long === '--help') continue;
        const flags = [option.long, option.short].filter((f): f is string => f !== undefined);
        if (!flags.some((flag) => new RegExp(`(?<![\\w-])${flag}(?![\\w-])`).test(section)))
          missing.push(`mockapi ${name} ${option.flags}`);
      }
    }
    expect(missing).toEqual([]);
  });
});

describe('--help ends with examples', () => {
  test.each(COMMANDS)('mockapi %s --help', async (command) => {
    const help = await runCli([command, '--help']);
    expect(help.code).toBe(0);
    const [, examples] = help.stdout.split('\nExamples:\n');
    expect(examples).toBeDefined();
    const lines = examples!.trimEnd().split('\n');
    expect(lines.length).toBeGreaterThanOrEqual(1);
    expect(lines.length).toBeLessThanOrEqual(2);
    for (const line of lines)
      expect(line).toMatch(new RegExp(`^  \\$ (KEY=\\$\\()?npx mockapi-cli ${command}\\b.*# \\S`));
  });

  test('each example is a command line mockapi accepts', async () => {
    // Parsed only: the program's own parser, not run (no server starts, no file is written).
    // Environment assignments before the command (`MOCKAPI_UPSTREAM_KEY=… npx …`) and single quotes are the shell's.
    const { createProgram } = await import('../../src/cli/cli.js');
    const { HELP_EXAMPLES } = await import('../../src/cli/help-examples.js');
    for (const [command, lines] of Object.entries(HELP_EXAMPLES)) {
      for (const line of lines) {
        const words = line
          .replace(/#.*$/, '')
          .replace(/^KEY=\$\((.*)\)\s*$/, '$1')
          .trim()
          .replace(/^([A-Z_][A-Z0-9_]*=\S*\s+)+/, '')
          .match(/'[^']*'|\S+/g)!
          .map((w) => w.replace(/^'(.*)'$/, '$1'));
        expect(words.slice(0, 3)).toEqual(['npx', 'mockapi-cli', command]);
        let ran = false;
        const program = createProgram(() => (ran = true));
        program.configureOutput({ writeErr: () => {}, writeOut: () => {} });
        await program.parseAsync(words.slice(2), { from: 'user' });
        expect(ran).toBe(true);
      }
    }
  });
});
