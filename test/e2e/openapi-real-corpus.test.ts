// Real public API descriptions, whole (test/fixtures/openapi/corpus/README.md names each source and
// licence; stored brotli-compressed): each is imported with the real CLI and served with
// `openapi.validate.requests: enforce`. For every operation, a valid request is built from the
// description's schemas (helpers/valid-request.ts) and sent: it must be accepted — the endpoint's
// own answer, no violation — and that answer must satisfy its response schema, unless it is the
// description's own example (served as written). A false rejection or a generated answer that
// breaks its schema cannot come back unseen. One server per description; requests go a few at a
// time, so the server compiles the next operation's validators while this process checks an
// answer (its own compiled schemas shared by every answer: answer-check.ts).
import { describe, expect, test } from 'vitest';
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { brotliDecompressSync } from 'node:zlib';
import { load } from 'js-yaml';
import { startServe, useTempDir } from '../helpers/cli.js';
import { apiKeyOf, OPENAPI_FIXTURES, runImport } from '../helpers/openapi.js';
import { requestBuilder } from '../helpers/valid-request.js';
import { createAnswerCheck } from '../../src/validate/answer-check.js';
import { deref, isObject, type Json, type JsonObject } from '../../src/description/json-pointer.js';
import { escapeTemplates, resolveExample } from '../../src/openapi/answers.js';

const temp = useTempDir('mockapi-openapi-real-corpus-', { each: true });

interface Leaf {
  status?: number;
  when?: unknown;
  responses?: Leaf[];
}
interface Endpoint {
  openapi?: string;
  method: string;
  path: string;
  response?: Leaf;
  responses?: Leaf[];
}

const CORPUS = ['github.json', 'stripe.json', 'twilio.json', 'openai.json', 'adyen-checkout.json'];

/** Requests in flight at once: the server compiles one operation's validators while this process checks another's answer. */
const IN_FLIGHT = 2;

/** The status of an endpoint's default answer: its `response`, else the `responses` item without `when` (the last). */
function defaultStatus(endpoint: Endpoint): number {
  let leaf: Leaf | undefined = endpoint.response;
  let list = endpoint.responses;
  while (leaf === undefined && list !== undefined) {
    const last: Leaf | undefined = list.find((item) => item.when === undefined);
    if (last?.responses !== undefined) list = last.responses;
    else leaf = last ?? {};
  }
  return leaf?.status ?? 200;
}

const encodeToken = (token: string): string => token.replace(/~/g, '~0').replace(/\//g, '~1');

function isDeepEqual(a: unknown, b: unknown): boolean {
  return (
    JSON.stringify(a) === JSON.stringify(b) ||
    (typeof a === 'object' &&
      a !== null &&
      typeof b === 'object' &&
      b !== null &&
      Object.keys(a).length === Object.keys(b).length &&
      Object.entries(a).every(([k, v]) => isDeepEqual(v, (b as Record<string, unknown>)[k])))
  );
}

/** The examples of a media type, as an import writes them. */
function examplesOf(doc: JsonObject, media: JsonObject): Json[] {
  const found: Json[] = [];
  if (Object.hasOwn(media, 'example')) found.push(media.example as Json);
  const examples = deref(doc, media.examples);
  if (isObject(examples))
    for (const raw of Object.values(examples)) {
      const example = deref(doc, raw);
      if (isObject(example) && Object.hasOwn(example, 'value')) found.push(example.value as Json);
    }
  return found.map((value) => escapeTemplates(resolveExample(doc, value)));
}

interface Outcome {
  rejected: string[];
  broken: string[];
  skipped: string[];
  ownExamples: number;
  answersChecked: number;
}

/** The answer `res` gave for `endpoint` (its body `body`) against its response schema: counted in `outcome`. */
function checkAnswer(
  doc: JsonObject,
  holds: (pointer: string, value: Json) => boolean,
  endpoint: Endpoint,
  res: Response,
  body: string,
  outcome: Outcome,
): void {
  const marker = endpoint.openapi as string;
  const [method, template] = [
    marker.slice(0, marker.indexOf(' ')).toLowerCase(),
    marker.slice(marker.indexOf(' ') + 1),
  ];
  const type = (res.headers.get('content-type') ?? '').split(';')[0] as string;
  const operation = deref(
    doc,
    (deref(doc, (doc.paths as JsonObject)[template] as Json) as JsonObject)[method],
  ) as JsonObject;
  const responses = deref(doc, operation.responses) as JsonObject;
  const code = [String(res.status), `${String(res.status)[0]}XX`, 'default'].find((c) => responses[c] !== undefined);
  const response = code === undefined ? undefined : deref(doc, responses[code]);
  const content = isObject(response) ? deref(doc, response.content) : undefined;
  if (!/json/.test(type) || body === '' || !isObject(content)) return;
  const mediaType =
    Object.keys(content).find((t) => t.split(';')[0] === type) ?? Object.keys(content).find((t) => t === '*/*');
  const media = mediaType === undefined ? undefined : deref(doc, content[mediaType]);
  if (!isObject(media) || media.schema === undefined) return;
  const value = JSON.parse(body) as Json;
  // The description's own example is served as written, whatever its schema says: only a generated
  // answer is held to the schema (and only it costs a schema compile here).
  if (examplesOf(doc, media).some((example) => isDeepEqual(example, value))) {
    outcome.ownExamples++;
    return;
  }
  outcome.answersChecked++;
  const pointer = `/paths/${encodeToken(template)}/${method}/responses/${encodeToken(code as string)}/content/${encodeToken(mediaType as string)}/schema`;
  if (!holds(pointer, value)) outcome.broken.push(`${marker}: a generated answer breaks its schema`);
}

/** Operations whose request body no sample satisfies (GitHub's oneOf/anyOf of near-identical shapes). */
const UNBUILT: Record<string, string[]> = {
  'github.json': [
    'POST /orgs/{org}/artifacts/metadata/storage-record',
    'POST /orgs/{org}/projectsV2/{project_number}/items',
    'POST /repos/{owner}/{repo}/code-scanning/codeql/variant-analyses',
    'POST /users/{username}/projectsV2/{project_number}/items',
  ],
};

describe('real descriptions: valid requests are accepted in enforce mode, answers satisfy their schemas', () => {
  test.each(CORPUS)(
    '%s',
    async (name) => {
      const started = performance.now();
      const spec = join(temp.path, name);
      const text = brotliDecompressSync(await readFile(join(OPENAPI_FIXTURES, 'corpus', `${name}.br`))).toString(
        'utf8',
      );
      await writeFile(spec, text);
      const doc = JSON.parse(text) as JsonObject;
      const config = join(temp.path, 'mockapi.yaml');
      expect((await runImport(spec, config)).code).toBe(0);
      const imported = await readFile(config, 'utf8');
      await writeFile(
        config,
        imported.replace(/^apiKey:/m, `openapi:\n  spec: ./${name}\n  validate: { requests: enforce }\napiKey:`),
      );
      const key = await apiKeyOf(config);
      const endpoints = (load(imported) as { endpoints: Endpoint[] }).endpoints.filter(
        (e) => e.openapi !== undefined && e.method !== 'HEAD',
      );
      endpoints.sort((a, b) => (a.openapi as string).localeCompare(b.openapi as string));
      const build = requestBuilder(doc);
      const holds = await createAnswerCheck(doc, String(doc.openapi));
      const outcome: Outcome = { rejected: [], broken: [], skipped: [], ownExamples: 0, answersChecked: 0 };
      const importedAt = performance.now();
      const server = await startServe(['-c', config, '--no-state', '--log', 'off', '--no-watch'], {
        timeoutMs: 120_000,
      });
      const servedAt = performance.now();

      /** Sends the valid request for `endpoint` and checks what comes back. */
      const exercise = async (endpoint: Endpoint): Promise<void> => {
        const marker = endpoint.openapi as string;
        const [method, template] = [marker.slice(0, marker.indexOf(' ')), marker.slice(marker.indexOf(' ') + 1)];
        const request = build(template, method.toLowerCase(), endpoint.path);
        if ('skip' in request) {
          outcome.skipped.push(`${marker}: ${request.skip}`);
          return;
        }
        const url = `${server.mock}${request.path}${request.query === '' ? '' : `?${request.query}`}`;
        const send = (): Promise<Response> =>
          fetch(url, {
            method,
            headers: { ...request.headers, 'x-api-key': key },
            ...(request.body === undefined ? {} : { body: request.body }),
            redirect: 'manual',
          });
        // A kept-alive connection the server closed while it compiled schemas (seconds, on a busy
        // machine) fails the next request on it: sent again, on a new connection.
        let res: Response | undefined;
        for (let attempt = 1; res === undefined; attempt++)
          res = await send().catch((err: Error) => {
            if (attempt < 3) return undefined;
            throw new Error(`${marker} ${url}: ${err.message}; the server said: ${server.stderr().slice(-2000)}`);
          });
        const body = await res.text();
        const type = (res.headers.get('content-type') ?? '').split(';')[0] as string;
        if (res.status !== defaultStatus(endpoint) || type === 'application/problem+json')
          outcome.rejected.push(`${marker} ${url.slice(server.mock.length)} → ${res.status} ${body.slice(0, 300)}`);
        else checkAnswer(doc, holds, endpoint, res, body, outcome);
      };
      try {
        let next = 0;
        const worker = async (): Promise<void> => {
          while (next < endpoints.length) await exercise(endpoints[next++] as Endpoint);
        };
        await Promise.all(Array.from({ length: IN_FLIGHT }, worker));
      } finally {
        await server.stop();
      }
      const { rejected, broken, skipped, ownExamples, answersChecked } = outcome;
      const seconds = (from: number, to: number): string => `${((to - from) / 1000).toFixed(1)} s`;
      console.log(
        `${name}: ${endpoints.length} operations; ${endpoints.length - skipped.length - rejected.length} valid requests accepted, ` +
          `${rejected.length} rejected, ${skipped.length} not built (${skipped.join('; ')}); ${ownExamples} answers the description's own examples (served as written), ${answersChecked} generated ones checked against their schemas; ` +
          `import ${seconds(started, importedAt)}, serve ${seconds(importedAt, servedAt)}, requests and checks ${seconds(servedAt, performance.now())}`,
      );
      expect(rejected).toEqual([]);
      expect(broken).toEqual([]);
      // The operations this test cannot build a valid request for (the sampler finds no body their
      // schema accepts), each by name: one more is a regression of the builder or the import.
      expect(skipped.map((line) => line.split(': ')[0]).sort()).toEqual([...(UNBUILT[name] ?? [])].sort());
    },
    600_000,
  );
});
