// `mockapi resources list` against a running `mockapi serve` (the built CLI, port 0).
import { afterAll, describe, expect, test } from 'vitest';
import { runCli, startServe, stopAll, tempDir, writeConfig } from '../../helpers/cli.js';

afterAll(stopAll);

describe('mockapi resources list', () => {
  test("each collection with its count; a collection's objects as JSON lines, filtered with --where; an unknown name", async () => {
    const dir = await tempDir();
    const file = await writeConfig(
      dir,
      `apiKey: mk_resourcesCli0000000000000000000001
resources:
  customers:
    style: stripe
    path: /v1/customers
    fields: { object: customer, email: null }
    seed:
      - { id: cus_1, email: ada@example.com }
      - { id: cus_2, email: grace@example.com }
`,
    );
    const server = await startServe(['-c', file], { cwd: dir });
    const summary = await runCli(['resources', 'list', '-c', file], { cwd: dir });
    expect([summary.code, summary.stdout]).toEqual([0, 'customers  stripe  /v1/customers  2 objects\n']);
    const list = await runCli(['resources', 'list', 'customers', '-c', file], { cwd: dir });
    expect(list.stdout).toBe(
      '{"id":"cus_1","object":"customer","email":"ada@example.com"}\n{"id":"cus_2","object":"customer","email":"grace@example.com"}\n',
    );
    const where = await runCli(
      ['resources', 'list', 'customers', '--where', 'email=grace@example.com', '--json', '-c', file],
      { cwd: dir },
    );
    expect(JSON.parse(where.stdout)).toEqual([{ id: 'cus_2', object: 'customer', email: 'grace@example.com' }]);
    const unknown = await runCli(['resources', 'list', 'nope', '-c', file], { cwd: dir });
    expect([unknown.code, unknown.stderr]).toEqual([
      1,
      'the server refused: no resource named "nope" in the config (resources: customers)\n',
    ]);
    await server.stop();
    const none = await runCli(['resources', 'list', '-c', file], { cwd: dir });
    expect(none.code).toBe(1);
    expect(none.stderr).toMatch(/no running mockapi serve of/);
  });
});
