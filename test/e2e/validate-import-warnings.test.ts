// `mockapi validate` on a config `mockapi import` just wrote: what the description itself gets
// wrong — its own examples breaking its own schemas (GitHub's), a response schema ajv cannot
// compile (a 3.1 file's `enum: []`-like mistakes) — is a warning with its position, counted in a
// summary line, and the check passes; a body the user changed so that it breaks the schema is
// still an error, and every other check still runs. Black-box: the real CLI.
import { describe, expect, test } from 'vitest';
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { runCli, useTempDir } from '../helpers/cli.js';

const temp = useTempDir('mockapi-validate-import-warnings-', { each: true });

const DESCRIPTION = `openapi: 3.0.3
info: { title: t, version: '1' }
paths:
  /teams/{id}:
    get:
      responses:
        '200':
          description: ok
          content:
            application/json:
              schema: { $ref: '#/components/schemas/Team' }
              example: { id: 1, name: core }
  /teams:
    get:
      responses:
        '200':
          description: ok
          content:
            application/json:
              schema: { type: array, items: { $ref: '#/components/schemas/Team' } }
              examples:
                one: { value: [{ id: 1, name: core, type: team }] }
                two: { value: [{ id: 'x', name: core, type: team }] }
  /scores:
    get:
      responses:
        '200':
          description: ok
          content:
            application/json:
              schema: { type: object, properties: { score: { type: number, exclusiveMinimum: [] } } }
              example: { score: 1 }
components:
  schemas:
    Team:
      type: object
      required: [id, name, type]
      properties: { id: { type: integer }, name: { type: string }, type: { type: string } }
`;

async function imported(): Promise<{ config: string; text: string }> {
  const spec = join(temp.path, 'openapi.yaml');
  const config = join(temp.path, 'mockapi.yaml');
  await writeFile(spec, DESCRIPTION);
  expect((await runCli(['import', spec, '-c', config])).code).toBe(0);
  const text = (await readFile(config, 'utf8')).replace(/^apiKey:/m, 'openapi:\n  spec: ./openapi.yaml\napiKey:');
  await writeFile(config, text);
  return { config, text };
}

describe('mockapi validate right after an import', () => {
  test("the description's own examples and schemas it cannot compile are warnings with positions and a summary; exit 0", async () => {
    const { config, text } = await imported();
    const lineOf = (needle: string, from = 0): number => text.slice(0, text.indexOf(needle, from)).split('\n').length;
    const res = await runCli(['validate', '-c', config]);
    expect(res.code).toBe(0);
    expect(res.stdout).toBe(
      `${config} is valid (3 endpoints)\n` +
        "3 warnings from the description: 2 answers are the description's own examples, which break its own schema (served as written); 1 schema of the description cannot be compiled (not checked; the rest is)\n",
    );
    const warnings = res.stderr.trimEnd().split('\n');
    expect(warnings).toEqual([
      `${config}:${lineOf('spec: ./openapi.yaml')}:9: warning: openapi.spec GET /scores: the 200 response schema (#/paths/~1scores/get/responses/200/content/application~1json/schema) cannot be compiled: exclusiveMinimum value must be ["number"]; answers are not checked against it`,
      `${config}:${lineOf('      body:\n        id: 1') + 1}:9: warning: endpoints[0].response.body is the description's own example for the 200 response of GET /teams/{id}, which breaks its own schema: type is required`,
      `${config}:${lineOf('        body:\n          - id: x') + 1}:11: warning: endpoints[1].responses[0].body is the description's own example for the 200 response of GET /teams, which breaks its own schema: 0[id] must be integer`,
    ]);
  });

  test('a body changed by hand that breaks the schema is an error, beside the warnings', async () => {
    const { config, text } = await imported();
    const edited = text.replace('      body:\n        id: 1\n', '      body:\n        id: 2\n');
    expect(edited).not.toBe(text);
    await writeFile(config, edited);
    const res = await runCli(['validate', '-c', config]);
    expect(res.code).toBe(1);
    expect(res.stdout).toBe('');
    const lines = res.stderr.trimEnd().split('\n');
    expect(lines[0]).toMatch(
      /endpoints\[0\]\.response\.body does not match the 200 response of GET \/teams\/\{id\}: type is required$/,
    );
    expect(lines.slice(1).every((line) => line.includes(': warning: '))).toBe(true);
    expect(lines).toHaveLength(3);
  });
});
