// Every command README.md and docs/ show in a shell block runs, exactly as written, against the
// package as a user installs it. The README's own install steps make that package: `npm ci` and
// `npm run pack` in a copy of this checkout (test/helpers/packed.ts, shared with pack.test.ts), then
// `npm install --save-dev <the tarball>` in a fresh project. Each block then runs in a folder of
// that project (or in the checkout, where the page runs an example of it), in a network namespace
// of its own so that the pages' fixed ports (4010, 4443, 6379…) are free for every block at once.
// Servers run in the background until their port answers and are stopped by Ctrl-C (SIGINT to
// their process group); what a block needs that is not a command of the page (the config the page
// shows, a running server, a webhook receiver, an upstream) is set up in SESSIONS below.
//
// A command no session accounts for runs in a fresh project with `mockapi init`'s config, so a new
// command on a page fails here until it runs (or is listed in NOT_RUN, with why).
import { beforeAll, describe, expect, test } from 'vitest';
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { mkdir, mkdtemp, readFile, symlink, writeFile } from 'node:fs/promises';
import { basename, join } from 'node:path';
import {
  commandsOf,
  driverScript,
  isServer,
  portsOf,
  shellBlocks,
  userPages,
  type DocCommand,
  type DriverStep,
} from '../helpers/doc-commands.js';
import { NPM_QUIET, packedCheckout, type PackedCheckout } from '../helpers/packed.js';
import { runCommand, startCommand, warningsBesidesNpmConfig } from '../helpers/pack.js';
import { ROOT } from '../helpers/cli.js';
import { SESSIONS, NOT_RUN, SUBSTITUTE, type Session } from '../helpers/doc-sessions.js';

/** Commands of the checkout the shared setup ran, once for every page that shows them (the same command in the same place). */
const RUN_IN_SETUP = new Set(['npm ci', 'npm run pack']);
/** `page: first command` of a block (the first the shared setup did not run). */
const keyOf = (page: string, commands: DocCommand[]) =>
  `${page}: ${commands.find((c) => !RUN_IN_SETUP.has(c.bare))?.bare ?? ''}`;
const BLOCKS = userPages().flatMap((page) =>
  shellBlocks(page).map((block) => ({ ...block, commands: commandsOf(block) })),
);
const byKey = new Map(BLOCKS.map((b) => [keyOf(b.page, b.commands), b]));
/** Installs: run on this machine's network before the block's other commands, which run offline. */
const HOST = /^npm (ci|install)\b/;

/** One plan: the blocks a session runs, in order, and the session. Blocks with the same commands run once. */
function plans(): { name: string; session: Session; blocks: typeof BLOCKS }[] {
  const claimed = new Set(SESSIONS.flatMap((s) => s.blocks));
  const out = SESSIONS.map((session) => ({
    name: session.blocks[0]!,
    session,
    blocks: session.blocks.flatMap((k) => byKey.get(k) ?? []),
  }));
  const commandsOfBlock = (b: (typeof BLOCKS)[number]) => JSON.stringify(b.commands.map((c) => c.bare));
  for (const block of BLOCKS) {
    const key = keyOf(block.page, block.commands);
    if (claimed.has(key)) continue;
    if (block.commands.every((c) => RUN_IN_SETUP.has(c.bare) || isNotRun(block.page, c.bare))) continue; // nothing left to run
    // The same commands as a block already planned (another page's copy of the README's install): run there.
    if (out.some((p) => p.blocks.some((b) => commandsOfBlock(b) === commandsOfBlock(block)))) continue;
    out.push({ name: key, session: { blocks: [key], init: true }, blocks: [block] });
  }
  return out;
}
const PLANS = plans();

let packed: PackedCheckout;
let app = '';
let netns = false;

/** A command with the page's placeholders replaced (SUBSTITUTE). */
function substituted(text: string): string {
  let out = text;
  for (const s of SUBSTITUTE) out = out.replace(s.text, s.with === 'tarball' ? packed.tarball : s.with);
  return out;
}

function isNotRun(page: string, bare: string): boolean {
  return NOT_RUN.some((n) => n.page === page && n.command === bare);
}

/** The folder a session's project commands run in: its own under the project, named after its first block. */
function folderOf(name: string, session: Session): string {
  if (session.place === 'checkout') return packed.checkout;
  if (session.inApp === true) return app;
  const slug = name
    .replace(/[^A-Za-z0-9]+/g, '-')
    .replace(/^-|-$/g, '')
    .slice(0, 60);
  return join(app, `${slug}-${createHash('sha1').update(name).digest('hex').slice(0, 6)}`);
}

beforeAll(async () => {
  packed = await packedCheckout();
  app = join(packed.root, 'app');
  await mkdir(app, { recursive: true });
  // What `npm init -y` writes, minus the noise: the project the README installs into.
  await writeFile(
    join(app, 'package.json'),
    JSON.stringify({ name: 'some-app', version: '1.0.0', private: true }, null, 2),
  );
  netns =
    spawnSync('unshare', [...(process.getuid?.() === 0 ? [] : ['-r']), '-n', 'sh', '-c', 'ip link set lo up'], {
      stdio: 'ignore',
    }).status === 0;
  // Every install first, one after the other, on the network (npm's cache preferred).
  for (const plan of PLANS) {
    const dir = folderOf(plan.name, plan.session);
    await mkdir(dir, { recursive: true });
    for (const block of plan.blocks) {
      for (const command of block.commands.filter(
        (c) => HOST.test(c.bare) && !RUN_IN_SETUP.has(c.bare) && !isNotRun(block.page, c.bare),
      )) {
        const run = await runCommand('bash', ['-c', substituted(command.text)], {
          cwd: command.place === 'checkout' ? packed.checkout : dir,
          timeoutMs: 300_000,
          env: NPM_QUIET,
        });
        expect({ command: command.text, code: run.code, stderr: run.stderr }).toEqual({
          command: command.text,
          code: 0,
          stderr: expect.any(String),
        });
        expect(warningsBesidesNpmConfig(run.stderr).filter((l) => /mockapi/i.test(l))).toEqual([]);
      }
    }
  }
}, 900_000);

describe('the pages and the sessions agree', () => {
  test('there are blocks, each named once, and every session names blocks that exist', () => {
    expect(BLOCKS.length).toBeGreaterThanOrEqual(25);
    expect(byKey.size).toBe(BLOCKS.length);
    expect(SESSIONS.flatMap((s) => s.blocks).filter((k) => !byKey.has(k))).toEqual([]);
    // An exit status other than 0 is only for a command of the session's own blocks.
    expect(
      SESSIONS.flatMap((s) =>
        Object.keys(s.exit ?? {}).filter(
          (c) => !s.blocks.some((k) => byKey.get(k)?.commands.some((d) => d.bare === c)),
        ),
      ),
    ).toEqual([]);
    expect(
      NOT_RUN.filter((n) => !BLOCKS.some((b) => b.page === n.page && b.commands.some((c) => c.bare === n.command))),
    ).toEqual([]);
    expect(SUBSTITUTE.filter((s) => !BLOCKS.some((b) => b.body.includes(s.text)))).toEqual([]);
  });

  test("the README's install steps are the shared checkout's: npm ci and npm run pack succeeded, and the tarball is the one the pages name", () => {
    expect({ code: packed.ci.code, stderr: packed.ci.stderr }).toEqual({ code: 0, stderr: expect.any(String) });
    // The README's first command: npm ci in a fresh clone builds, and warns about nothing of ours.
    expect(existsSync(join(packed.checkout, 'dist', 'cli', 'cli.bundle.cjs'))).toBe(true);
    expect(warningsBesidesNpmConfig(packed.ci.stderr).filter((line) => /mockapi/i.test(line))).toEqual([]);
    expect({ code: packed.pack.code, stderr: packed.pack.stderr }).toEqual({ code: 0, stderr: expect.any(String) });
    const version = (JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { version: string }).version;
    expect(packed.tarball).toBe(join(packed.checkout, `mockapi-cli-${version}.tgz`));
    // The pages' placeholder names that very file.
    expect(basename(SUBSTITUTE.find((s) => s.with === 'tarball')!.text)).toBe(basename(packed.tarball));
  });

  test(
    'node bin/mockapi.js --version and npx mockapi --version work in the checkout right after npm ci',
    { timeout: 90_000 },
    async () => {
      const { version } = JSON.parse(await readFile(join(packed.checkout, 'package.json'), 'utf8')) as {
        version: string;
      };
      const bin = await runCommand(process.execPath, ['bin/mockapi.js', '--version'], {
        cwd: packed.checkout,
        timeoutMs: 60_000,
      });
      expect({ out: bin.stdout, err: bin.stderr, code: bin.code }).toEqual({ out: `${version}\n`, err: '', code: 0 });
      // npx in the project runs the project's own bin (`--no`: never download a package named mockapi); run with the packs (packed.ts).
      expect({ out: packed.npx.stdout, code: packed.npx.code }).toEqual({ out: `${version}\n`, code: 0 });
    },
  );
});

/** At most this many sessions at once: each runs a few node processes on a 2-core machine. */
const AT_ONCE = 3;
let running = 0;
const queue: (() => void)[] = [];
async function slot<T>(work: () => Promise<T>): Promise<T> {
  if (running >= (netns ? AT_ONCE : 1)) await new Promise<void>((go) => queue.push(go));
  running++;
  try {
    return await work();
  } finally {
    running--;
    queue.shift()?.();
  }
}

/** The steps of a session: its setup, then each command of its blocks that is not run elsewhere. */
function stepsOf(
  session: Session,
  blocks: typeof BLOCKS,
): { steps: DriverStep[]; commands: { page: string; command: DocCommand; id: string }[] } {
  const steps: DriverStep[] = [];
  const commands: { page: string; command: DocCommand; id: string }[] = [];
  // The harness's own mockapi runs the installed bin straight (npx would only add npm's start-up).
  const mockapi = join(app, 'node_modules', '.bin', 'mockapi');
  if (session.init === true) steps.push({ id: 'h-init', text: `${mockapi} init` });
  for (const [i, helper] of (session.helpers ?? []).entries())
    steps.push({ id: `h-helper${i}`, text: `node ${helper.file}`, server: { ports: helper.ports } });
  if (session.serve !== undefined)
    steps.push({
      id: 'h-serve',
      text: `${mockapi} serve ${session.serve.args ?? ''}`.trim(),
      server: { ports: session.serve.ports ?? [4010] },
    });
  for (const block of blocks) {
    for (const command of block.commands) {
      if (RUN_IN_SETUP.has(command.bare)) continue; // the shared checkout ran it
      if (HOST.test(command.bare) || isNotRun(block.page, command.bare)) continue; // installed before (or not run: NOT_RUN)
      const id = `c${commands.length}`;
      commands.push({ page: block.page, command, id });
      const step: DriverStep = { id, text: substituted(command.text) };
      if (isServer(command.bare)) step.server = { ports: portsOf(command.bare, session.ports?.[command.bare]) };
      if (session.before?.[command.bare] !== undefined) step.before = session.before[command.bare];
      if (session.after?.[command.bare] !== undefined) step.after = session.after[command.bare];
      if (session.exit?.[command.bare] !== undefined) step.rc = session.exit[command.bare];
      steps.push(step);
    }
  }
  return { steps, commands };
}

/**
 * Sessions in the shared checkout run one at a time: each `npx mockapi-cli` there is an `npm exec` of
 * the checkout's own package, which reifies npm's npx folder for it (a link to the checkout) — two at
 * once have left a running CLI without a dependency it requires (npm/cli#8224's family). Sessions in
 * folders of their own still run side by side.
 */
let checkoutTurn: Promise<void> = Promise.resolve();
function inCheckoutTurn<T>(work: () => Promise<T>): Promise<T> {
  const run = checkoutTurn.then(work);
  checkoutTurn = run.then(
    () => undefined,
    () => undefined,
  );
  return run;
}

describe.concurrent('every shell block of the pages runs as written', () => {
  test.each(PLANS.map((p) => [p.name, p] as const))('%s', { timeout: 900_000 }, async (_name, plan) =>
    (plan.session.place === 'checkout' ? inCheckoutTurn : <T>(work: () => Promise<T>) => work())(() =>
      slot(async () => {
        const dir = folderOf(plan.name, plan.session);
        await mkdir(dir, { recursive: true });
        for (const [file, text] of Object.entries(plan.session.files ?? {})) await writeFile(join(dir, file), text);
        if (plan.session.config !== undefined)
          await writeFile(join(dir, 'mockapi.yaml'), pageYaml(plan.session.config));
        if (plan.session.files?.['package.json'] !== undefined && !existsSync(join(dir, 'node_modules')))
          await symlink(join(app, 'node_modules'), join(dir, 'node_modules'), 'dir');
        const out = await mkdtemp(join(packed.root, 'out-'));
        const { steps, commands } = stepsOf(plan.session, plan.blocks);
        await writeFile(join(out, 'driver.sh'), driverScript(dir, out, steps));
        const wrap = netns
          ? [
              'unshare',
              ...(process.getuid?.() === 0 ? [] : ['-r']),
              '-n',
              'bash',
              '-c',
              `ip link set lo up && exec bash ${join(out, 'driver.sh')}`,
            ]
          : ['bash', join(out, 'driver.sh')];
        const run = startCommand(wrap[0]!, wrap.slice(1), {
          cwd: dir,
          group: true,
          env: { ...NPM_QUIET, npm_config_offline: netns ? 'true' : 'false' },
        });
        const timer = setTimeout(() => killAll(run.child.pid!, out), 600_000);
        const code = await run.exited;
        clearTimeout(timer);
        killAll(run.child.pid!, out);
        await run.closed;
        const read = (id: string, ext: string) =>
          existsSync(join(out, `${id}.${ext}`)) ? readFileSync(join(out, `${id}.${ext}`), 'utf8') : undefined;
        const report = () =>
          [
            `driver exit ${code}: ${run.stderr()}`,
            ...steps.map(
              (s) =>
                `[${s.id}] ${s.text}\n  rc: ${read(s.id, 'rc')?.trim()}\n  stdout: ${read(s.id, 'out') ?? ''}\n  stderr: ${read(s.id, 'err') ?? ''}`,
            ),
          ].join('\n');
        for (const step of steps)
          expect(read(step.id, 'rc')?.trim(), `${step.id} did not end as the page says:\n${report()}`).toBe(
            String(step.rc ?? 0),
          );
        expect(code, report()).toBe(0);
        for (const { command, id } of commands) {
          // A `$ ` block shows the command's output: it is exactly that.
          if (command.output !== undefined)
            expect(read(id, 'out')?.replace(/\n$/, ''), report()).toBe(command.output.join('\n'));
          // A server's ready line, as the page's comment quotes it.
          for (const note of command.comments.filter((c) => /^(mockapi listening on|inspector:) /.test(c)))
            expect(read(id, 'out')?.split('\n'), report()).toContain(note);
        }
        for (const check of plan.session.expect ?? []) {
          const at = commands.find((c) => c.command.bare === check.command);
          expect(at, `no command ${check.command} in ${plan.name}`).toBeDefined();
          const text = read(at!.id, check.stream ?? 'out') ?? '';
          // Where the page quotes this output, it quotes what the command printed.
          if (check.quoted !== undefined) {
            expect(
              commands.find((c) => c.command.bare === (check.quoted!.by ?? check.command))?.command.comments,
            ).toContain(check.quoted.comment);
            if (check.has instanceof RegExp) expect(check.quoted.comment).toMatch(check.has);
          }
          if (typeof check.has === 'string') expect(text, report()).toContain(check.has);
          else expect(text, report()).toMatch(check.has);
        }
      }),
    ),
  );
});

/** Stops what a session left running: the driver's group and each server's. */
function killAll(pid: number, out: string): void {
  const groups = [
    pid,
    ...(existsSync(join(out, 'pids'))
      ? readFileSync(join(out, 'pids'), 'utf8')
          .split('\n')
          .filter((l) => l !== '')
          .map(Number)
      : []),
  ];
  for (const group of groups) {
    try {
      process.kill(-group, 'SIGKILL');
    } catch {
      // already gone
    }
  }
}

/** The YAML block of a page that holds `containing`, with the session's replacements. */
function pageYaml(config: NonNullable<Session['config']>): string {
  const text = readFileSync(join(ROOT, config.page), 'utf8');
  const block = [...text.matchAll(/^```yaml\n([\s\S]*?)^```$/gm)]
    .map((m) => m[1]!)
    .find((b) => b.includes(config.containing));
  if (block === undefined) throw new Error(`no yaml block with ${JSON.stringify(config.containing)} in ${config.page}`);
  let out = block;
  for (const [from, to] of config.replace ?? []) {
    if (!out.includes(from)) throw new Error(`${config.page}: the yaml block no longer has ${from}`);
    out = out.replace(from, to);
  }
  return out;
}
