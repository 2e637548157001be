// The fleet's config and command line without Redis: `fleet.store` checked at its line, a variable
// that is not set makes the server run alone (said on stderr), `fleet status` without a fleet.
import { describe, expect, test } from 'vitest';
import { runCli, startServe, useTempDir, writeConfig } from '../helpers/cli.js';

const dir = useTempDir('mockapi-fleet-cli-');
const config = (fleet: string) =>
  `project: p\napiKey: mk_fleet_cli_key_0000000000000001\nfleet: { store: "${fleet}" }\nendpoints:\n  - method: GET\n    path: /a\n`;

describe('fleet.store and mockapi fleet status', () => {
  test('a wrong fleet.store is an error at its line and column', async () => {
    const file = await writeConfig(dir.path, config('${env.REDIS_URL}'), 'wrong.yaml');
    const http = await writeConfig(dir.path, config('http://127.0.0.1:6379'), 'http.yaml');
    const [wrong, other] = await Promise.all([runCli(['validate', '-c', file]), runCli(['validate', '-c', http])]);
    expect(wrong.code).toBe(1);
    expect(wrong.stderr).toContain(
      'wrong.yaml:3:17: fleet.store may only read environment variables named MOCKAPI_*, got REDIS_URL',
    );
    expect(other.stderr).toContain(
      'http.yaml:3:17: fleet.store must be a redis://host:port/db, rediss://… or unix:///path/to/socket URL, got "http://127.0.0.1:6379"',
    );
  });

  test('a variable that is not set: the server runs alone, and says so', async () => {
    const file = await writeConfig(dir.path, config('${env.MOCKAPI_FLEET_CLI_UNSET}'), 'alone.yaml');
    expect((await runCli(['validate', '-c', file])).code).toBe(0);
    const server = await startServe(['-c', file, '--log', 'off', '--no-state']);
    await server.waitForOutput(
      /fleet\.store reads MOCKAPI_FLEET_CLI_UNSET, not set in the environment: this server runs alone, not as a host of a fleet/,
    );
    const res = await fetch(`${server.mock}/a`, { headers: { 'x-api-key': 'mk_fleet_cli_key_0000000000000001' } });
    expect(res.status).toBe(200);
    await server.stop();
    const status = await runCli(['fleet', 'status', '-c', file]);
    expect(status.code).toBe(1);
    expect(status.stderr).toBe(
      'mockapi: fleet.store reads MOCKAPI_FLEET_CLI_UNSET, not set in the environment; set it or pass --fleet redis://host:port/db\n',
    );
  });

  test('fleet status: without a fleet, with a wrong URL, with a Redis that cannot be reached', async () => {
    const file = await writeConfig(dir.path, 'apiKey: mk_fleet_cli_key_0000000000000001\nendpoints: []\n', 'none.yaml');
    const [none, http, away] = await Promise.all([
      runCli(['fleet', 'status', '-c', file]),
      runCli(['fleet', 'status', '-c', file, '--fleet', 'http://x']),
      runCli(['fleet', 'status', '-c', file, '--fleet', 'unix:///nonexistent/redis.sock']),
    ]);
    expect(none.code).toBe(1);
    expect(none.stderr).toContain('has no fleet.store; pass --fleet redis://host:port/db');
    expect(http.code).toBe(2);
    expect(away.code).toBe(1);
    expect(away.stderr).toBe("mockapi: cannot reach the fleet's Redis unix:///nonexistent/redis.sock\n");
  });
});
