// The parallel-session examples (examples/sessions-*), run in the project that installed the
// packed tarball: each copied into a folder of its own, with the user's test runner linked from the
// checkout's node_modules (`npm install -D vitest` would put it there; no download in the test).
import { cp, mkdir, symlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { ROOT } from './cli.js';
import { runCommand, type CommandResult } from './pack.js';
import { CHROMIUM } from './browser.js';

/** Copies `examples/<name>` into `app/<name>`; returns the folder. */
export async function copyExample(app: string, name: string): Promise<string> {
  const dir = join(app, name);
  await cp(join(ROOT, 'examples', name), dir, {
    recursive: true,
    filter: (path) => !/[\\/](node_modules|\.mockapi)$/.test(path),
  });
  return dir;
}

/** Links a package of the checkout's node_modules into `app`'s (the user's own install of it). */
export async function linkFromCheckout(app: string, name: string): Promise<void> {
  const at = join(app, 'node_modules', name);
  await mkdir(join(at, '..'), { recursive: true });
  await symlink(join(ROOT, 'node_modules', name), at, 'dir').catch((err: NodeJS.ErrnoException) => {
    if (err.code !== 'EEXIST') throw err;
  });
}

/** `vitest run` in `dir` with the linked vitest. */
export function runVitest(dir: string): Promise<CommandResult> {
  return runCommand(process.execPath, [join(ROOT, 'node_modules', 'vitest', 'vitest.mjs'), 'run', '--root', dir], {
    cwd: dir,
    timeoutMs: 150_000,
    env: { NO_COLOR: '1', CI: '1' },
  });
}

/** `node run-tests.mjs` in `dir`, as the example's page says. */
export function runNodeTests(dir: string): Promise<CommandResult> {
  return runCommand(process.execPath, ['run-tests.mjs'], { cwd: dir, timeoutMs: 150_000, env: { NO_COLOR: '1' } });
}

/**
 * `playwright test` in `dir` on Debian's chromium (no browser download): the example's config as it
 * is, with the launch options of this machine and two workers added by a config that imports it.
 */
export async function runPlaywright(dir: string): Promise<CommandResult> {
  const args = [
    '--headless',
    '--no-sandbox',
    '--disable-gpu',
    '--disable-quic',
    '--no-first-run',
    '--disable-background-networking',
    '--disable-component-update',
    '--disable-sync',
  ];
  await writeFile(
    join(dir, 'playwright.here.config.ts'),
    `import config from './playwright.config';\nexport default { ...config, workers: 2, use: { ...config.use, launchOptions: { executablePath: ${JSON.stringify(CHROMIUM)}, args: ${JSON.stringify(args)} } } };\n`,
  );
  const cli = join(dir, '..', 'node_modules', '@playwright', 'test', 'cli.js');
  return runCommand(process.execPath, [cli, 'test', '-c', 'playwright.here.config.ts', '--reporter=line'], {
    cwd: dir,
    timeoutMs: 180_000,
    env: { NO_COLOR: '1', PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD: '1' },
  });
}
