// Answers `mockapi import` generates from schemas satisfy those schemas: a `pattern` beside a format
// the sampler has no generator for (Discord's `format: snowflake`) is honoured; where the `oneOf`
// alternative taken gives a value another alternative also matches, another is tried; where none
// can be told apart, the answer has no body rather than one its schema refuses, and the summary
// says so. Black-box: the real CLI.
import { describe, expect, test } from 'vitest';
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { parse } from 'yaml';
import { runCli, useTempDir } from '../helpers/cli.js';

const temp = useTempDir('mockapi-generated-answers-', { each: true });

const DESCRIPTION = `openapi: 3.1.0
info: { title: t, version: '1' }
paths:
  /users/{id}:
    get:
      responses:
        '200':
          description: ok
          content:
            application/json:
              schema:
                type: object
                required: [id]
                properties:
                  id: { type: string, format: snowflake, pattern: '^(0|[1-9][0-9]*)$' }
                  email: { type: string, format: email, pattern: '@' }
  /shapes:
    get:
      responses:
        '200':
          description: ok
          content:
            application/json:
              schema:
                oneOf:
                  - { type: object, additionalProperties: false, properties: { name: { type: string } } }
                  - { type: object, required: [name], properties: { name: { type: string }, size: { type: integer } } }
        '409':
          description: conflict
          content:
            application/json:
              schema:
                oneOf:
                  - { type: object, properties: { message: { type: string }, url: { type: string } } }
                  - { type: object, properties: { message: { type: string }, metadata: { type: object } } }
`;

interface Endpoint {
  path: string;
  response?: { status: number; body?: unknown };
  responses?: Array<{ status: number; body?: unknown; name?: string }>;
}

describe('generated answers', () => {
  test('follow their schemas, or have no body, said in the summary', async () => {
    const spec = join(temp.path, 'openapi.yaml');
    const config = join(temp.path, 'mockapi.yaml');
    await writeFile(spec, DESCRIPTION);
    const res = await runCli(['import', spec, '-c', config]);
    expect(res.code).toBe(0);
    expect(res.stderr).toContain(
      "  GET /shapes: no value made from the 409 response's schema satisfies that schema (its oneOf alternatives overlap?); answered without a body\n",
    );
    const { endpoints } = parse(await readFile(config, 'utf8')) as { endpoints: Endpoint[] };
    const user = endpoints.find((e) => e.path === '/users/:id');
    const id = (user?.response?.body as { id: string; email: string }).id;
    expect(id).toMatch(/^(0|[1-9][0-9]*)$/);
    // A format the sampler knows keeps its realistic value.
    expect((user?.response?.body as { email: string }).email).toBe('user@example.com');
    const shapes = endpoints.find((e) => e.path === '/shapes');
    // The first alternative's value ({name}) matches the second too; the second's ({name, size}) only the second.
    expect(shapes?.responses?.find((r) => r.status === 200)?.body).toEqual({ name: 'string', size: 0 });
    expect(shapes?.responses?.find((r) => r.status === 409)).toEqual({
      name: 'code=409',
      when: { 'headers.prefer': { matches: '(^|[,;])\\s*code=("409"|409)\\s*($|[,;])' } },
      status: 409,
    });
  });
});
