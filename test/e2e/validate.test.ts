// Request validation against the OpenAPI description: violations reported (header, journal,
// filter) or enforced (the template, the operation's own 400 example, a 422 problem), the traps of
// OpenAPI 3.0 and 3.1 schemas, form bodies with bracket notation, and the description's problems as
// config errors with positions.
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { copyFile, mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { ROOT, runCli, startServe, useTempDir, type ServeProcess } from '../helpers/cli.js';

const FIXTURES = join(ROOT, 'test', 'fixtures', 'validate');
const KEY = 'mk_validateTest0000000000000000001';
const temp = useTempDir('mockapi-validate-');

const CONFIG = `apiKey: ${KEY}
openapi:
  spec: ./charges-3.0.yaml
endpoints:
  - method: POST
    path: /v1/charges
    openapi: POST /charges
    responses:
      - when: { body.metadata.order_id: "42" }
        body: { id: ch_42, order: "\${body.metadata.order_id}" }
      - body: { id: ch_1 }
  - method: GET
    path: /v1/charges
    response: { body: { data: [] } }
  - method: GET
    path: /v1/charges/:id
    validate: enforce
    response: { body: { id: ch_1 } }
  - method: GET
    path: /v1/other
    response: { body: { ok: true } }
`;

const ENFORCE_CONFIG = `apiKey: ${KEY}
openapi:
  spec: ./charges-3.0.yaml
  validate:
    requests: enforce
    answer: { status: 400, body: { error: { message: "\${violations[0].message}", param: "\${violations[0].param}", count: "\${violations.length}" } } }
endpoints:
  - method: POST
    path: /v1/charges
    response: { body: { id: ch_1 } }
`;

const PETS_CONFIG = `apiKey: ${KEY}
openapi:
  spec: ./pets-3.1.yaml
  validate: { requests: enforce }
endpoints:
  - method: POST
    path: /pets
    response: { status: 201, body: { id: 1 } }
`;

async function serve(name: string, text: string): Promise<ServeProcess> {
  const dir = join(temp.path, name);
  await mkdir(dir, { recursive: true });
  for (const file of ['charges-3.0.yaml', 'pets-3.1.yaml']) await copyFile(join(FIXTURES, file), join(dir, file));
  await writeFile(join(dir, 'mockapi.yaml'), text);
  return startServe(['-c', join(dir, 'mockapi.yaml'), '--no-state', '--log', 'off']);
}

const headers = (extra: Record<string, string> = {}) => ({ 'x-api-key': KEY, ...extra });
const json = (body: unknown) => ({
  method: 'POST',
  headers: headers({ 'content-type': 'application/json' }),
  body: JSON.stringify(body),
});
const form = (body: string) => ({
  method: 'POST',
  headers: headers({ 'content-type': 'application/x-www-form-urlencoded' }),
  body,
});

describe('report (the default)', () => {
  let server: ServeProcess;
  beforeAll(async () => {
    server = await serve('report', CONFIG);
  });
  afterAll(() => server.stop());

  async function lastViolations(): Promise<unknown> {
    const res = await fetch(`${server.url}/__mockapi/requests?limit=1`, { headers: headers() });
    const { requests } = (await res.json()) as { requests: Array<{ violations?: unknown }> };
    return requests[0]?.violations;
  }

  test('a JSON body that breaks the schema gets the usual answer, the count in a header and the violations in the journal', async () => {
    const res = await fetch(`${server.mock}/v1/charges`, {
      ...json({ amount: 0, currency: 'gbp', description: null, metadata: { order_id: 'x1' }, receipt_email: 'nope' }),
      headers: { ...headers({ 'content-type': 'application/json', origin: 'http://app.example' }) },
    });
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ id: 'ch_1' });
    expect(res.headers.get('x-mockapi-violations')).toBe('4');
    expect(res.headers.get('access-control-expose-headers')).toContain('X-Mockapi-Violations');
    // nullable: description null is fine; readOnly `id` is not required in a request;
    // exclusiveMinimum: true (3.0's boolean form) refuses 0.
    expect(await lastViolations()).toEqual([
      {
        in: 'body',
        pointer: '/amount',
        param: 'amount',
        keyword: 'exclusiveMinimum',
        message: 'body field amount must be > 0',
      },
      {
        in: 'body',
        pointer: '/currency',
        param: 'currency',
        keyword: 'enum',
        message: 'body field currency must be one of "usd", "eur"',
      },
      {
        in: 'body',
        pointer: '/metadata/order_id',
        param: 'metadata[order_id]',
        keyword: 'pattern',
        message: 'body field metadata[order_id] must match pattern "^[0-9]+$"',
      },
      {
        in: 'body',
        pointer: '/receipt_email',
        param: 'receipt_email',
        keyword: 'format',
        message: 'body field receipt_email must match format "email"',
      },
    ]);
  });

  test('a request that follows the description gets no header and an empty list', async () => {
    const res = await fetch(`${server.mock}/v1/charges`, json({ amount: 5, currency: 'usd', description: null }));
    expect(res.headers.get('x-mockapi-violations')).toBeNull();
    expect(await lastViolations()).toEqual([]);
  });

  test('form bodies: bracket notation is read as nesting, coerced per schema, and feeds when and ${body.*}', async () => {
    const ok = await fetch(`${server.mock}/v1/charges`, form('amount=12&currency=usd&metadata[order_id]=42'));
    expect(ok.headers.get('x-mockapi-violations')).toBeNull();
    expect(await ok.json()).toEqual({ id: 'ch_42', order: '42' });
    const bad = await fetch(`${server.mock}/v1/charges`, form('amount=abc&currency=usd&metadata%5Border_id%5D=4x'));
    expect(bad.headers.get('x-mockapi-violations')).toBe('2');
    expect(await lastViolations()).toEqual([
      {
        in: 'body',
        pointer: '/amount',
        param: 'amount',
        keyword: 'type',
        message: 'body field amount must be integer',
      },
      {
        in: 'body',
        pointer: '/metadata/order_id',
        param: 'metadata[order_id]',
        keyword: 'pattern',
        message: 'body field metadata[order_id] must match pattern "^[0-9]+$"',
      },
    ]);
  });

  test('multipart bodies are validated field by field', async () => {
    const body = new FormData();
    body.set('amount', '0');
    body.set('currency', 'usd');
    const res = await fetch(`${server.mock}/v1/charges`, { method: 'POST', headers: headers(), body });
    expect(res.headers.get('x-mockapi-violations')).toBe('1');
    expect(await lastViolations()).toEqual([
      {
        in: 'body',
        pointer: '/amount',
        param: 'amount',
        keyword: 'exclusiveMinimum',
        message: 'body field amount must be > 0',
      },
    ]);
  });

  test('a missing body, a body that is not JSON and a content type the operation lacks', async () => {
    await fetch(`${server.mock}/v1/charges`, { method: 'POST', headers: headers() });
    expect(await lastViolations()).toEqual([
      { in: 'body', pointer: '', param: null, keyword: 'required', message: 'the body is required' },
    ]);
    await fetch(`${server.mock}/v1/charges`, {
      method: 'POST',
      headers: headers({ 'content-type': 'application/json' }),
      body: '{"amount":',
    });
    expect(await lastViolations()).toEqual([
      { in: 'body', pointer: '', param: null, keyword: 'parse', message: 'the body is not valid JSON' },
    ]);
    await fetch(`${server.mock}/v1/charges`, {
      method: 'POST',
      headers: headers({ 'content-type': 'text/plain' }),
      body: 'hi',
    });
    expect(await lastViolations()).toEqual([
      {
        in: 'body',
        pointer: '',
        param: null,
        keyword: 'contentType',
        message:
          'the body\'s content type "text/plain" is not one the operation accepts (application/json, application/x-www-form-urlencoded, multipart/form-data)',
      },
    ]);
  });

  test('query (deepObject, explode: false, coerced numbers) and header parameters; the endpoint matched by method and path', async () => {
    const bad = await fetch(`${server.mock}/v1/charges?limit=500&created[gt]=x&created[foo]=1&ids=ch_1,zz`, {
      headers: headers(),
    });
    expect(bad.headers.get('x-mockapi-violations')).toBe('5');
    expect(await lastViolations()).toEqual([
      {
        in: 'query',
        pointer: '/created/foo',
        param: 'created[foo]',
        keyword: 'additionalProperties',
        message: 'query parameter created[foo] is not allowed',
      },
      {
        in: 'query',
        pointer: '/created/gt',
        param: 'created[gt]',
        keyword: 'type',
        message: 'query parameter created[gt] must be integer',
      },
      {
        in: 'query',
        pointer: '/ids/1',
        param: 'ids[1]',
        keyword: 'pattern',
        message: 'query parameter ids[1] must match pattern "^ch_"',
      },
      {
        in: 'query',
        pointer: '/limit',
        param: 'limit',
        keyword: 'maximum',
        message: 'query parameter limit must be <= 100',
      },
      {
        in: 'header',
        pointer: '/x-request-id',
        param: 'x-request-id',
        keyword: 'required',
        message: 'header x-request-id is required',
      },
    ]);
    const good = await fetch(`${server.mock}/v1/charges?limit=5&created[gt]=3&ids=ch_1,ch_2`, {
      headers: headers({ 'x-request-id': '0b7f3c1e-9d2a-4c59-8f1e-2a3b4c5d6e7f' }),
    });
    expect(good.headers.get('x-mockapi-violations')).toBeNull();
    expect(await lastViolations()).toEqual([]);
  });

  test('an endpoint the description lacks is not validated; ?violations=true lists the requests that broke it', async () => {
    await fetch(`${server.mock}/v1/other`, { headers: headers() });
    expect(await lastViolations()).toBeUndefined();
    await fetch(`${server.mock}/v1/charges?limit=0`, { headers: headers() });
    const res = await fetch(`${server.url}/__mockapi/requests?violations=true`, { headers: headers() });
    const { requests } = (await res.json()) as { requests: Array<{ violations: unknown[] }> };
    expect(requests.length).toBeGreaterThan(0);
    expect(requests.every((r) => r.violations.length > 0)).toBe(true);
    const wrong = await fetch(`${server.url}/__mockapi/requests?violations=maybe`, { headers: headers() });
    expect(wrong.status).toBe(400);
  });

  test("validate: enforce on an endpoint answers with the operation's own 400 example", async () => {
    const res = await fetch(`${server.mock}/v1/charges/bad-id`, { headers: headers() });
    expect(res.status).toBe(400);
    expect(await res.json()).toEqual({ error: { type: 'invalid_request_error', message: 'No such charge' } });
    const ok = await fetch(`${server.mock}/v1/charges/ch_1`, { headers: headers() });
    expect(ok.status).toBe(200);
  });
});

test('enforce with openapi.validate.answer: the template reads violations', async () => {
  const server = await serve('enforce', ENFORCE_CONFIG);
  try {
    const res = await fetch(`${server.mock}/v1/charges`, json({ currency: 'usd' }));
    expect(res.status).toBe(400);
    expect(await res.json()).toEqual({
      error: { message: 'body field amount is required', param: 'amount', count: 1 },
    });
    const journal = await fetch(`${server.url}/__mockapi/requests?limit=1`, { headers: headers() });
    const { requests } = (await journal.json()) as { requests: Array<{ step: string }> };
    expect(requests[0]?.step).toBe('validation');
    expect((await fetch(`${server.mock}/v1/charges`, json({ amount: 1, currency: 'usd' }))).status).toBe(200);
  } finally {
    await server.stop();
  }
});

test('OpenAPI 3.1: type lists and numeric exclusiveMinimum; enforce without an example gives a 422 problem', async () => {
  const server = await serve('pets', PETS_CONFIG);
  try {
    expect((await fetch(`${server.mock}/pets`, json({ name: 'Rex', tag: null }))).status).toBe(201);
    const res = await fetch(`${server.mock}/pets`, json({ name: '', tag: 5, age: 0 }));
    expect(res.status).toBe(422);
    expect(res.headers.get('content-type')).toBe('application/problem+json');
    expect(await res.json()).toEqual({
      type: 'about:blank',
      title: 'The request does not match the API description',
      status: 422,
      detail: '3 violations of the OpenAPI description',
      message: 'body field age must be > 0 (and 2 more)',
      violations: [
        {
          in: 'body',
          pointer: '/age',
          param: 'age',
          keyword: 'exclusiveMinimum',
          message: 'body field age must be > 0',
        },
        {
          in: 'body',
          pointer: '/name',
          param: 'name',
          keyword: 'minLength',
          message: 'body field name must NOT have fewer than 1 characters',
        },
        { in: 'body', pointer: '/tag', param: 'tag', keyword: 'type', message: 'body field tag must be string,null' },
      ],
    });
  } finally {
    await server.stop();
  }
});

describe("the description's problems are config errors with positions", () => {
  async function validate(
    name: string,
    config: string,
    files: Record<string, string> = {},
  ): Promise<{ code: number | null; stderr: string }> {
    const dir = join(temp.path, name);
    await mkdir(join(dir, 'api'), { recursive: true });
    for (const [file, text] of Object.entries(files)) await writeFile(join(dir, file), text);
    await writeFile(join(dir, 'mockapi.yaml'), config);
    return runCli(['validate', '-c', join(dir, 'mockapi.yaml')], { cwd: dir });
  }

  test('a description that does not parse', async () => {
    const res = await validate('broken', `apiKey: ${KEY}\nopenapi:\n  spec: api/openapi.yaml\n`, {
      'api/openapi.yaml': 'openapi: [3.0\n',
    });
    expect(res.code).toBe(1);
    expect(res.stderr).toMatch(/mockapi\.yaml:3:9: openapi\.spec.*not valid YAML or JSON/);
  });

  test("a $ref that leaves the description's folder", async () => {
    const spec =
      "openapi: 3.0.3\ninfo: { title: t, version: '1' }\npaths:\n  /a:\n    get:\n      responses: { '200': { $ref: '../outside.yaml' } }\n";
    const res = await validate('escape', `apiKey: ${KEY}\nopenapi:\n  spec: api/openapi.yaml\n`, {
      'api/openapi.yaml': spec,
      'outside.yaml': 'description: x\n',
    });
    expect(res.code).toBe(1);
    expect(res.stderr).toMatch(/mockapi\.yaml:3:9: openapi\.spec.*outside/);
  });

  test('an endpoint naming an operation the description lacks', async () => {
    const spec =
      "openapi: 3.0.3\ninfo: { title: t, version: '1' }\npaths:\n  /a:\n    get:\n      responses: { '200': { description: ok } }\n";
    const config = `apiKey: ${KEY}\nopenapi:\n  spec: api/openapi.yaml\nendpoints:\n  - method: GET\n    path: /b\n    openapi: GET /b\n`;
    const res = await validate('missing-op', config, { 'api/openapi.yaml': spec });
    expect(res.code).toBe(1);
    expect(res.stderr).toMatch(/mockapi\.yaml:7:14: endpoints\[0\]\.openapi.*has no operation GET \/b/);
  });
});

describe('serve and the CLI', () => {
  async function setup(name: string, text: string): Promise<string> {
    const dir = join(temp.path, name);
    await mkdir(dir, { recursive: true });
    for (const file of ['charges-3.0.yaml', 'pets-3.1.yaml']) await copyFile(join(FIXTURES, file), join(dir, file));
    await writeFile(join(dir, 'mockapi.yaml'), text);
    return join(dir, 'mockapi.yaml');
  }

  test('serve --fail-on-violations exits 1 after a violating request and sums them up at stop; requests --violations lists them', async () => {
    const config = await setup('fail-on', CONFIG);
    const server = await startServe(['-c', config, '--no-state', '--log', 'off', '--fail-on-violations']);
    await fetch(`${server.mock}/v1/charges`, json({ amount: 5, currency: 'usd' }));
    await fetch(`${server.mock}/v1/charges`, json({ amount: 'five', currency: 'usd' }));
    const listed = await runCli(['requests', '-c', config, '--violations']);
    expect(listed.code).toBe(0);
    expect(listed.stdout).toMatch(
      /#2 POST \/mock\/v1\/charges → 200 response \(POST \/v1\/charges\) [\d.]+ ms\n {2}body \/amount type: body field amount must be integer\n$/,
    );
    expect(await server.stop()).toBe(1);
    expect(server.stderr()).toContain(
      'OpenAPI validation: 1 of 2 validated requests broke the description (1 violation): POST /v1/charges (1)',
    );
    expect(server.stderr()).toContain('mockapi: 1 request broke the OpenAPI description (--fail-on-violations)');
  });

  test('serve --fail-on-violations exits 0 when every request followed the description', async () => {
    const config = await setup('fail-on-clean', CONFIG);
    const server = await startServe(['-c', config, '--no-state', '--log', 'off', '--fail-on-violations']);
    await fetch(`${server.mock}/v1/charges`, json({ amount: 5, currency: 'usd' }));
    expect(await server.stop()).toBe(0);
    expect(server.stderr()).toContain('OpenAPI validation: all 1 validated request followed the description');
  });

  test('the description is watched: an edit changes what is validated', async () => {
    const config = await setup('watch', CONFIG);
    const server = await startServe(['-c', config, '--no-state', '--log', 'off']);
    try {
      const post = () => fetch(`${server.mock}/v1/charges`, json({ amount: 500, currency: 'usd' }));
      expect((await post()).headers.get('x-mockapi-violations')).toBeNull();
      const spec = join(temp.path, 'watch', 'charges-3.0.yaml');
      const text = (await import('node:fs/promises')).readFile(spec, 'utf8');
      await writeFile(
        spec,
        (await text).replace(
          'amount: { type: integer, minimum: 0, exclusiveMinimum: true }',
          'amount: { type: integer, maximum: 100 }',
        ),
      );
      const deadline = Date.now() + 10_000;
      let header: string | null = null;
      while (header === null && Date.now() < deadline) header = (await post()).headers.get('x-mockapi-violations');
      expect(header).toBe('1');
    } finally {
      await server.stop();
    }
  });

  test("mockapi validate checks static bodies against the operation's response schema", async () => {
    const config = await setup(
      'static-bodies',
      `apiKey: ${KEY}
openapi:
  spec: ./charges-3.0.yaml
endpoints:
  - method: POST
    path: /v1/charges
    response: { body: { id: ch_1, amount: "5" } }
  - method: GET
    path: /v1/charges/:id
    responses:
      - status: 404
        body: { gone: true }
`,
    );
    const res = await runCli(['validate', '-c', config]);
    expect(res.code).toBe(1);
    expect(res.stderr).toMatch(
      /mockapi\.yaml:7:23: endpoints\[0\]\.response\.body does not match the 200 response of POST \/charges: amount must be integer\n$/,
    );
    await writeFile(
      config,
      (await (await import('node:fs/promises')).readFile(config, 'utf8')).replace('amount: "5"', 'amount: 5'),
    );
    expect((await runCli(['validate', '-c', config])).code).toBe(0);
  });
});

test('a schema ajv cannot compile leaves only its part unchecked; mockapi validate warns, naming the operation and the schema', async () => {
  const dir = join(temp.path, 'bad-pattern');
  await mkdir(dir, { recursive: true });
  await writeFile(
    join(dir, 'openapi.yaml'),
    "openapi: 3.0.3\ninfo: { title: t, version: '1' }\npaths:\n  /a:\n    get:\n      parameters: [{ name: q, in: query, schema: { type: string, pattern: '([' } }, { name: n, in: query, required: true, schema: { type: integer } }]\n      responses: { '200': { description: ok } }\n",
  );
  await writeFile(
    join(dir, 'mockapi.yaml'),
    `apiKey: ${KEY}\nopenapi:\n  spec: ./openapi.yaml\nendpoints:\n  - method: GET\n    path: /a\n    response: { body: { ok: true } }\n`,
  );
  const checked = await runCli(['validate', '-c', join(dir, 'mockapi.yaml')]);
  expect(checked.code).toBe(0);
  expect(checked.stderr).toMatch(
    /^\S*mockapi\.yaml:3:9: warning: openapi\.spec GET \/a: the query parameter q schema \(#\/paths\/~1a\/get\/parameters\/0\/schema\) cannot be compiled: .+; requests are validated without it\n$/,
  );
  expect(checked.stdout).toBe(
    `${join(dir, 'mockapi.yaml')} is valid (1 endpoint)\n1 warning from the description: 1 schema of the description cannot be compiled (not checked; the rest is)\n`,
  );
  const server = await startServe(['-c', join(dir, 'mockapi.yaml'), '--no-state', '--log', 'off']);
  try {
    const res = await fetch(`${server.mock}/a?q=x&n=1`, { headers: headers() });
    expect([res.status, res.headers.get('x-mockapi-violations')]).toEqual([200, null]);
    expect(await res.json()).toEqual({ ok: true });
    // The other parameter is still checked.
    const bad = await fetch(`${server.mock}/a?q=x&n=one`, { headers: headers() });
    expect([bad.status, bad.headers.get('x-mockapi-violations')]).toEqual([200, '1']);
    const journal = await fetch(`${server.url}/__mockapi/requests?limit=1`, { headers: headers() });
    const { requests } = (await journal.json()) as {
      requests: Array<{ violations?: Array<{ param: string }>; notes: string[] }>;
    };
    expect(requests[0]?.violations?.map((v) => v.param)).toEqual(['n']);
    // The journal names the part that was not checked.
    expect(requests[0]?.notes).toEqual([
      'not validated: query parameter q (its schema in the description cannot be compiled; the rest of the request was checked)',
    ]);
  } finally {
    await server.stop();
  }
});

test('a $ref whose path crosses another $ref (as bundlers write them) is followed', async () => {
  const dir = join(temp.path, 'ref-through-ref');
  await mkdir(dir, { recursive: true });
  await writeFile(
    join(dir, 'openapi.yaml'),
    `openapi: 3.0.3
info: { title: t, version: '1' }
paths:
  /a:
    post:
      requestBody:
        content:
          application/json:
            schema:
              type: object
              properties:
                owner: { $ref: '#/components/schemas/Owner' }
                other: { $ref: '#/paths/~1a/post/requestBody/content/application~1json/schema/properties/owner/oneOf/1' }
      responses: { '200': { description: ok } }
components:
  schemas:
    Owner:
      oneOf:
        - { type: string }
        - { type: object, required: [login], properties: { login: { type: string } } }
`,
  );
  await writeFile(
    join(dir, 'mockapi.yaml'),
    `apiKey: ${KEY}\nopenapi:\n  spec: ./openapi.yaml\nendpoints:\n  - method: POST\n    path: /a\n    response: { body: { ok: true } }\n`,
  );
  expect((await runCli(['validate', '-c', join(dir, 'mockapi.yaml')])).code).toBe(0);
  const server = await startServe(['-c', join(dir, 'mockapi.yaml'), '--no-state', '--log', 'off']);
  try {
    const res = await fetch(`${server.mock}/a`, json({ owner: 'octocat', other: {} }));
    expect(res.headers.get('x-mockapi-violations')).toBe('1');
    const journal = await fetch(`${server.url}/__mockapi/requests?limit=1`, { headers: headers() });
    const { requests } = (await journal.json()) as { requests: Array<{ violations?: unknown }> };
    expect(requests[0]?.violations).toEqual([
      {
        in: 'body',
        pointer: '/other/login',
        param: 'other[login]',
        keyword: 'required',
        message: 'body field other[login] is required',
      },
    ]);
  } finally {
    await server.stop();
  }
});

test('serve --fail-on-violations with --workers is refused: each worker sees only its own requests', async () => {
  const res = await runCli([
    'serve',
    '-c',
    join(FIXTURES, 'charges-3.0.yaml'),
    '--workers',
    '2',
    '--fail-on-violations',
  ]);
  expect(res.code).toBe(1);
  expect(res.stderr).toBe(
    'mockapi: --fail-on-violations works with one process; drop --workers (each worker sees only its own requests)\n',
  );
});

test("a key sent as a body field name never reaches the journal's violations", async () => {
  const server = await serve('secret-name', CONFIG);
  try {
    const res = await fetch(`${server.mock}/v1/charges`, json({ amount: 1, currency: 'usd', metadata: { [KEY]: 1 } }));
    expect(res.headers.get('x-mockapi-violations')).toBe('1');
    const text = await (await fetch(`${server.url}/__mockapi/requests?violations=true`, { headers: headers() })).text();
    expect(text).not.toContain(KEY);
    expect(text).toContain('"param":"metadata[<redacted>]"');
  } finally {
    await server.stop();
  }
});

test("an endpoint whose path is not the description's (no server base path) reads its path parameters from its own segments", async () => {
  const config = `apiKey: ${KEY}\nopenapi:\n  spec: ./charges-3.0.yaml\nendpoints:\n  - method: GET\n    path: /charges/:chargeId\n    openapi: GET /charges/{id}\n    response: { body: { id: ch_1 } }\n`;
  const server = await serve('own-path', config);
  try {
    expect(
      (await fetch(`${server.mock}/charges/ch_1`, { headers: headers() })).headers.get('x-mockapi-violations'),
    ).toBeNull();
    expect(
      (await fetch(`${server.mock}/charges/bad`, { headers: headers() })).headers.get('x-mockapi-violations'),
    ).toBe('1');
    const journal = await fetch(`${server.url}/__mockapi/requests?limit=1`, { headers: headers() });
    const { requests } = (await journal.json()) as { requests: Array<{ violations?: unknown }> };
    expect(requests[0]?.violations).toEqual([
      {
        in: 'path',
        pointer: '/id',
        param: 'id',
        keyword: 'pattern',
        message: 'path parameter id must match pattern "^ch_[a-z0-9]+$"',
      },
    ]);
  } finally {
    await server.stop();
  }
});
