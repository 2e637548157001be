// The package's declarations (dist/*.d.ts, as `npm run build` leaves them in the checkout) check in
// a project that imports every export path with tsc's defaults: `skipLibCheck: false`, so every
// declaration file the public types reach is checked, not only the project's own code.
import { execFile } from 'node:child_process';
import { mkdir, readFile, symlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, test } from 'vitest';
import { ROOT, tempDir } from '../helpers/cli.js';

const NAME = 'mockapi-cli';

/** The export paths whose condition lists `types`: `mockapi-cli`, `mockapi-cli/vitest`, … */
async function typedExports(): Promise<string[]> {
  const pkg = JSON.parse(await readFile(join(ROOT, 'package.json'), 'utf8')) as {
    exports: Record<string, string | { types?: string }>;
  };
  return Object.entries(pkg.exports)
    .filter(([, target]) => typeof target === 'object' && target.types !== undefined)
    .map(([path]) => (path === '.' ? NAME : `${NAME}/${path.slice(2)}`));
}

describe('the declarations a consumer reads', () => {
  test('a strict nodenext project importing every export path typechecks with skipLibCheck false', async () => {
    const paths = await typedExports();
    expect(paths).toEqual(
      expect.arrayContaining([NAME, `${NAME}/client`, `${NAME}/vitest`, `${NAME}/node-test`, `${NAME}/playwright`]),
    );
    const app = await tempDir('mockapi-declarations-');
    await mkdir(join(app, 'node_modules', '@types'), { recursive: true });
    // The package as the checkout is (its dist/), and the types of Node; the package's own
    // dependencies (vitest, @playwright/test, undici) resolve from the checkout's node_modules.
    await symlink(ROOT, join(app, 'node_modules', NAME), 'dir');
    await symlink(join(ROOT, 'node_modules', '@types', 'node'), join(app, 'node_modules', '@types', 'node'), 'dir');
    await writeFile(join(app, 'package.json'), JSON.stringify({ name: 'consumer', private: true, type: 'module' }));
    await writeFile(
      join(app, 'tsconfig.json'),
      JSON.stringify({
        compilerOptions: { strict: true, module: 'nodenext', target: 'es2022', noEmit: true, types: ['node'] },
        files: ['index.ts'],
      }),
    );
    await writeFile(
      join(app, 'index.ts'),
      [
        ...paths.map((path, i) => `import * as entry${i} from '${path}';`),
        `export { ${paths.map((_, i) => `entry${i}`).join(', ')} };`,
        '',
      ].join('\n'),
    );
    const tsc = join(ROOT, 'node_modules', 'typescript', 'bin', 'tsc');
    const run = await promisify(execFile)(process.execPath, [tsc, '-p', app], { cwd: app }).then(
      (r) => ({ code: 0, out: r.stdout + r.stderr }),
      (err: { code?: number; stdout?: string; stderr?: string }) => ({
        code: err.code ?? 1,
        out: `${err.stdout ?? ''}${err.stderr ?? ''}`,
      }),
    );
    expect(run.out).toBe('');
    expect(run.code).toBe(0);
  }, 120_000);
});
