// SPEC §7: every mistake in dynamic answers is a config error with file, line, column and field —
// at `validate`, at start and on reload — and hot reload keeps sequence positions and scenario states.
import { writeFile } from 'node:fs/promises';
import { afterAll, describe, expect, test } from 'vitest';
import { runCli, startServe, stopAll, tempDir, waitFor, writeConfig } from '../helpers/cli.js';
import { KEY, serveDynamic } from '../helpers/dynamic.js';

afterAll(stopAll);

const BAD = `apiKey: ${KEY}
scenarios:
  order: { initial: none }
endpoints:
  - method: GET
    path: /users/:id
    responses:
      - when: { params.idd: "404", query.x: { matches: "(" }, qury.y: "1" }
        status: 404
      - when: { state.ordr: created, query.n: { gtt: 1 } }
        sequence:
          - { times: 0, status: 503 }
          - body: { id: "\${nt(params.id)}" }
      - body:
          id: \${int(parms.id)}
          greeting: "Hello \${query.name ?? }"
          secret: \${env.HOME}
          fake: \${fake.persn.fullName()}
        setState: { ordr: x }
        weight: 3
  - method: POST
    path: /pay
    response: { status: 200 }
    pick:
      - { weight: 0, status: 201 }
  - method: POST
    path: /pay2
    seedBy: \${uuid()}
    pick:
      - { weight: 0, status: "\${query.s}" }
      - { weight: 0, status: 201, times: 2, loop: true }
  - method: GET
    path: /empty
    sequence: []
`;

const EXPECTED = [
  'endpoints[0].responses[0].when["query.x"].matches is not a valid regular expression: Invalid regular expression: /(/: Unterminated group',
  'endpoints[0].responses[0].when["qury.y"] is not a known source; did you mean `query.y`?; sources are params.<name>, query.<name>, headers.<name>, cookies.<name>, body.<path>, request, state.<scenario>',
];

describe('config errors of dynamic answers', () => {
  test('validate names every mistake at its line and column, with "did you mean"', async () => {
    const dir = await tempDir();
    const file = await writeConfig(dir, BAD);
    const { code, stdout, stderr } = await runCli(['validate', '-c', file]);
    expect(code).toBe(1);
    const lines = (stdout + stderr)
      .trim()
      .split('\n')
      .map((l) => l.replace(`${file}:`, 'F:'));
    expect(lines).toEqual([
      `F:8:56: ${EXPECTED[0]}`,
      `F:8:63: ${EXPECTED[1]}`,
      'F:10:17: endpoints[0].responses[1].when["state.ordr"] reads an unknown scenario `ordr`; did you mean `order`?',
      'F:10:49: endpoints[0].responses[1].when["query.n"].gtt is not a known matcher; did you mean `gt`?',
      'F:12:22: endpoints[0].responses[1].sequence[0].times must be between 1 and 1000000000, got 0',
      'F:13:28: endpoints[0].responses[1].sequence[1].body.id unknown function `nt`; did you mean `int`?',
      'F:15:21: endpoints[0].responses[2].body.id unknown source `parms`; did you mean `params`?',
      'F:16:44: endpoints[0].responses[2].body.greeting unexpected `}`; expected a value',
      'F:17:25: endpoints[0].responses[2].body.secret only environment variables starting with MOCKAPI_ can be read, not `HOME`',
      'F:18:19: endpoints[0].responses[2].body.fake unknown faker module `persn`; did you mean `fake.person`?',
      'F:19:21: endpoints[0].responses[2].setState.ordr sets an unknown scenario `ordr`; did you mean `order`?',
      'F:20:9: endpoints[0].responses[2].weight is only read on the items of a `pick` list; this is one of the items of a `responses` list',
      'F:24:5: endpoints[1].pick cannot stand beside `response`: an answer is exactly one of response, responses, sequence, pick',
      'F:28:13: endpoints[2].seedBy cannot draw random values (uuid, randomInt, fake.*): it decides them; read the request, e.g. ${params.id}',
      'F:30:7: endpoints[2].pick needs at least one item with a weight above 0 (the default weight is 1)',
      'F:31:35: endpoints[2].pick[1].times is only read on the steps of a `sequence`; this is one of the items of a `pick` list',
      'F:31:45: endpoints[2].pick[1].loop only means something beside `sequence`',
      'F:34:15: endpoints[3].sequence must list at least one answer',
    ]);
  });

  test('a path parameter the route does not have is reported at its key', async () => {
    const dir = await tempDir();
    const file = await writeConfig(
      dir,
      `apiKey: ${KEY}\nendpoints:\n  - method: GET\n    path: /users/:id\n    responses:\n      - { when: { params.idd: "1" }, body: one }\n`,
    );
    const { code, stderr, stdout } = await runCli(['validate', '-c', file]);
    expect(code).toBe(1);
    expect((stdout + stderr).trim()).toBe(
      `${file}:6:19: endpoints[0].responses[0].when["params.idd"] reads \`params.idd\`, a path parameter the path does not have; did you mean \`params.id\`?`,
    );
  });

  test('serve refuses such a config at start, with the same lines', async () => {
    const dir = await tempDir();
    const file = await writeConfig(
      dir,
      `apiKey: ${KEY}\nendpoints:\n  - method: GET\n    path: /a\n    response: { body: "\${nope}" }\n`,
    );
    const { code, stderr } = await runCli(['serve', '-c', file, '--port', '0', '--no-watch']);
    expect(code).toBe(1);
    expect(stderr).toContain(
      `${file}:5:26: endpoints[0].response.body unknown source \`nope\`; the sources are params, query, headers, cookies, body, request, state, now, env, index`,
    );
  });
});

describe('hot reload', () => {
  test('keeps sequence positions and scenario states of what still exists; refuses a bad edit with its position', async () => {
    const yaml = (extra: string) => `apiKey: ${KEY}
scenarios:
  order: { initial: none }
endpoints:
  - method: GET
    path: /seq
    sequence: [{ body: one }, { body: two }, { body: three }]
  - method: POST
    path: /orders
    response: { setState: { order: created }, body: ok }
  - method: GET
    path: /state
    response: { body: "\${state.order}${extra}" }
`;
    const server = await serveDynamic(yaml(''));
    expect((await server.call('/seq')).text).toBe('one');
    await server.call('/orders', { method: 'POST' });
    expect((await server.call('/state')).text).toBe('created');
    await writeFile(server.file, yaml(' (edited)'));
    await waitFor(async () => (await server.call('/state')).text === 'created (edited)');
    expect((await server.call('/seq')).text).toBe('two');
    await writeFile(server.file, yaml(' ${bad(}'));
    await server.proc.waitForOutput(/config not reloaded/);
    expect(server.proc.stderr()).toContain(
      `${server.file}:13:45: endpoints[2].response.body unexpected \`}\`; expected a value`,
    );
    expect((await server.call('/seq')).text).toBe('three');
  }, 30_000);
});
