// The examples shipped in the repository work: every config validates with the built CLI, the root
// demo serves, and the vitest globalSetup example starts a server its tests can call.
import { afterAll, describe, expect, onTestFinished, test } from 'vitest';
import { Agent, request } from 'undici';
import { existsSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { spawnSync } from 'node:child_process';
import { ROOT, runCli, startServe, stopAll, tempDirSync } from '../helpers/cli.js';

/** Every `mockapi.yaml` under examples/, found by walking the folder (so a new example is covered). */
function exampleConfigs(): string[] {
  const found: string[] = [];
  const walk = (dir: string, depth: number): void => {
    if (depth > 5) return;
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      if (entry.name === 'node_modules' || entry.name.startsWith('.')) continue;
      const path = join(dir, entry.name);
      if (entry.isDirectory()) walk(path, depth + 1);
      else if (entry.name === 'mockapi.yaml') found.push(path);
    }
  };
  walk(join(ROOT, 'examples'), 0);
  return found.sort();
}

const CONFIGS = [join(ROOT, 'mockapi.yaml'), ...exampleConfigs()];
const DEMO_KEY = 'mk_demo7Qx2Lr9Vt4Nw8Ks3Hf6Jc1Pz5Bm0';
const VITEST_EXAMPLE_KEY = 'mk_vitestExample00000000000000000005';

afterAll(stopAll);

/**
 * `vitest run` on an example's folder with the example's own config, and the package loaded as a
 * user's install loads it. In a user's project `mockapi-cli` sits under node_modules, which vitest
 * imports natively; here the package's self-reference resolves to this checkout's dist/, outside
 * node_modules, which vitest would run through its transform as if it were the suite's source (~3 s
 * of CPU a run, and not what a user runs). The config passed extends the example's with dist/ as
 * external; the tarball's own run is in pack.test.ts.
 */
function runExampleSuite(dir: string, cwd: string) {
  const config = join(tempDirSync('mockapi-example-suite-'), 'vitest.config.ts');
  writeFileSync(
    config,
    `import base from ${JSON.stringify(join(dir, 'vitest.config.ts'))};\n` +
      `export default { ...base, test: { ...base.test, server: { deps: { external: [/\\/dist\\//] } } } };\n`,
  );
  return spawnSync(
    process.execPath,
    [join(ROOT, 'node_modules', 'vitest', 'vitest.mjs'), 'run', '--root', dir, '--config', config],
    { cwd, encoding: 'utf8', timeout: 120_000, env: { ...process.env, CI: '1', NO_COLOR: '1' } },
  );
}

/**
 * Servers register under `.mockapi/` beside their config (even with --no-watch, so rotate-key can
 * warn about them). That folder ignores itself in git; still, leave the checkout as we found it.
 */
function removeMockapiDirAfter(configDir: string): () => void {
  const path = join(configDir, '.mockapi');
  const existed = existsSync(path);
  return () => {
    if (!existed) rmSync(path, { recursive: true, force: true });
  };
}

describe('example configs', () => {
  test('there are examples to check', () => {
    expect(CONFIGS.map((c) => relative(ROOT, c))).toEqual(
      expect.arrayContaining([
        'mockapi.yaml',
        'examples/basic/mockapi.yaml',
        'examples/browser-cors/mockapi.yaml',
        'examples/flaky/mockapi.yaml',
        'examples/limits/mockapi.yaml',
        'examples/look-alike/ai/mockapi.yaml',
        'examples/look-alike/payments/mockapi.yaml',
        'examples/look-alike/source-hosting/mockapi.yaml',
        'examples/openapi/mockapi.yaml',
        'examples/vitest-global-setup/mockapi.yaml',
      ]),
    );
  });

  test.each(CONFIGS.map((c) => [relative(ROOT, c), c]))('%s passes mockapi validate', async (shown, path) => {
    const result = await runCli(['validate', '-c', shown], { cwd: ROOT });
    expect(result.stderr).toBe('');
    expect(result.code).toBe(0);
    expect(result.stdout).toMatch(new RegExp(`^${shown.replace(/[.]/g, '\\.')} is valid \\(\\d+ endpoints?\\)\\n$`));
    expect(path.startsWith(ROOT)).toBe(true);
  });
});

describe("the examples' schema line", () => {
  test("points at this repository's schema here (the package ships them pointing at the installed one)", () => {
    const lines = CONFIGS.flatMap((config) => {
      const line = readFileSync(config, 'utf8')
        .split('\n')
        .find((l) => l.startsWith('# yaml-language-server: $schema='));
      return line === undefined
        ? []
        : [[relative(ROOT, config), line.slice('# yaml-language-server: $schema='.length)] as const];
    });
    expect(lines.length).toBeGreaterThanOrEqual(10);
    for (const [config, ref] of lines)
      expect({ config, resolves: existsSync(join(ROOT, config, '..', ref)) }).toEqual({ config, resolves: true });
  });
});

describe('the root demo (npm start)', () => {
  test('serves GET /mock/products with its key', async () => {
    onTestFinished(removeMockapiDirAfter(ROOT));
    const server = await startServe(['-c', join(ROOT, 'mockapi.yaml'), '--no-state', '--no-watch', '--log', 'off'], {
      cwd: ROOT,
    });
    expect(server.stdout()).toMatch(/^mockapi listening on http:\/\/127\.0\.0\.1:\d+ \(5 endpoints\)\n/);
    const res = await request(`${server.mock}/products`, { headers: { 'x-api-key': DEMO_KEY } });
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toBe('application/json; charset=utf-8');
    expect(res.headers['ratelimit-limit']).toBe('60');
    expect(res.headers['ratelimit-remaining']).toBe('59');
    expect(await res.body.json()).toEqual([
      { id: 1, name: 'Espresso cup', price: 9.5 },
      { id: 2, name: 'Pour-over kettle', price: 49 },
    ]);
    const denied = await request(`${server.mock}/products`);
    expect(denied.statusCode).toBe(401);
    await denied.body.dump();
    expect(await server.stop()).toBe(0);
  });
});

describe('examples/openapi', () => {
  const dir = join(ROOT, 'examples', 'openapi');

  test('its config is the import of its description: mockapi import --check finds no drift', async () => {
    const check = await runCli(['import', 'petstore.yaml', '--check'], { cwd: dir });
    expect(check.code).toBe(0);
    expect(check.stdout).toBe('');
  });

  test("serves the description's examples, picked with Prefer: example=<name> and Prefer: code=<status>", async () => {
    onTestFinished(removeMockapiDirAfter(dir));
    const server = await startServe(['--no-state', '--no-watch', '--log', 'off'], { cwd: dir });
    const key = { 'x-api-key': 'mk_openapiExample000000000000000009' };
    const dog = await request(`${server.mock}/v1/pets/1`, { headers: key });
    expect(dog.statusCode).toBe(200);
    expect(await dog.body.json()).toEqual({ id: 1, name: 'Rex', tag: 'dog' });
    const cat = await request(`${server.mock}/v1/pets/2`, { headers: { ...key, prefer: 'example=cat' } });
    expect(await cat.body.json()).toEqual({ id: 2, name: 'Tom', tag: 'cat' });
    const missing = await request(`${server.mock}/v1/pets/3`, { headers: { ...key, prefer: 'code=404' } });
    expect(missing.statusCode).toBe(404);
    expect(await missing.body.json()).toEqual({ error: 'not_found', message: 'No pet has this id' });
    const created = await request(`${server.mock}/v1/pets`, {
      method: 'POST',
      headers: { ...key, 'content-type': 'application/json' },
      body: '{"name":"Rex"}',
    });
    expect(created.statusCode).toBe(201);
    await created.body.dump();
    expect(await server.stop()).toBe(0);
  });
});

describe('examples/vitest-global-setup', () => {
  test('global-setup.ts provides mockUrl; /users/42 answers with the example key; teardown stops the server', async () => {
    onTestFinished(removeMockapiDirAfter(join(ROOT, 'examples', 'vitest-global-setup')));
    // The example imports `mockapi-cli` itself: the package's self-reference resolves to dist/ via "exports".
    const { default: setup } = (await import('../../examples/vitest-global-setup/global-setup.js')) as {
      default: (project: unknown) => Promise<() => Promise<void>>;
    };
    // …and it is the built package, not the sources.
    const viaName = (await import('mockapi-cli')) as Record<string, unknown>;
    const viaDist = (await import('../../dist/index.js')) as Record<string, unknown>;
    expect(viaName.startMockServer).toBe(viaDist.startMockServer);
    const provided = new Map<string, unknown>();
    const project = { provide: (key: string, value: unknown) => void provided.set(key, value) };
    const teardown = await setup(project);
    let closed = false;
    try {
      expect([...provided.keys()]).toEqual(['mockUrl']);
      const mockUrl = provided.get('mockUrl') as string;
      expect(mockUrl).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/mock$/);

      const res = await request(`${mockUrl}/users/42`, { headers: { 'x-api-key': VITEST_EXAMPLE_KEY } });
      expect(res.statusCode).toBe(200);
      expect(await res.body.text()).toBe('{"id":42,"name":"Ada"}');

      const wrong = await request(`${mockUrl}/users/42`, { headers: { 'x-api-key': 'mk_wrong' } });
      expect(wrong.statusCode).toBe(401);
      await wrong.body.dump();

      expect(typeof teardown).toBe('function');
      await teardown();
      closed = true;
      // A new connection: whether a pooled one has already seen the server's FIN is the client's race.
      await expect(
        request(`${mockUrl}/users/42`, { headers: { 'x-api-key': VITEST_EXAMPLE_KEY }, dispatcher: new Agent() }),
      ).rejects.toMatchObject({ code: 'ECONNREFUSED' });
    } finally {
      if (!closed) await teardown();
    }
  });
});

describe('examples/testing-with-mockapi', () => {
  test('its vitest suite passes: wait for a request, reset between tests, rotate the key, move the clock', () => {
    // Run as a user would: vitest on the example's folder, its globalSetup starting the built package.
    const run = runExampleSuite(join(ROOT, 'examples', 'testing-with-mockapi'), ROOT);
    expect(run.stdout + run.stderr).toMatch(/Tests\s+4 passed \(4\)/);
    expect(run.status).toBe(0);
  }, 150_000);
});

describe('examples/vitest-helper', () => {
  const dir = join(ROOT, 'examples', 'vitest-helper');
  test("is the README's test, word for word", () => {
    const readme = readFileSync(join(ROOT, 'README.md'), 'utf8');
    expect(readme).toContain('```ts\n' + readFileSync(join(dir, 'users.test.ts'), 'utf8') + '```');
  });
  test('its vitest suite passes with the mockapi-cli/vitest helper, and the committed file is untouched', () => {
    const before = readFileSync(join(dir, 'mockapi.yaml'));
    const run = runExampleSuite(dir, dir);
    expect(run.stdout + run.stderr).toMatch(/Tests\s+1 passed \(1\)/);
    expect(run.status).toBe(0);
    expect(readFileSync(join(dir, 'mockapi.yaml')).equals(before)).toBe(true);
  }, 150_000);
});

describe('examples/sessions-* (tests in parallel against one server)', () => {
  // They run from the packed tarball in test/e2e/pack.test.ts; here: the testing page shows them word for word.
  const page = readFileSync(join(ROOT, 'docs', 'testing.md'), 'utf8');
  test.each([
    ['ts', 'sessions-vitest/vitest.config.ts'],
    ['ts', 'sessions-vitest/global-setup.ts'],
    ['ts', 'sessions-vitest/users.test.ts'],
    ['js', 'sessions-node-test/run-tests.mjs'],
    ['js', 'sessions-node-test/orders.test.mjs'],
    ['ts', 'sessions-playwright/playwright.config.ts'],
    ['ts', 'sessions-playwright/global-setup.ts'],
    ['ts', 'sessions-playwright/tests/cart.spec.ts'],
  ])('docs/testing.md shows %s examples/%s as it is', (lang, file) => {
    expect(page).toContain('```' + lang + '\n' + readFileSync(join(ROOT, 'examples', file), 'utf8') + '```');
  });
});
