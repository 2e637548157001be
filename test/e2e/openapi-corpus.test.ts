// Real public descriptions (test/fixtures/openapi/README.md names each source and licence):
// each is imported with the real CLI and served; every GET operation is requested and its answer
// validated with Ajv against the response schema the description gives for that status.
import { describe, expect, test } from 'vitest';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { parse } from 'yaml';
import AjvModule from 'ajv';
import Ajv2020Module from 'ajv/dist/2020.js';

// Ajv is CommonJS: its class is the module's default export's `default`.
const Ajv = AjvModule.default;
const Ajv2020 = Ajv2020Module.default;
import { readDescription } from '../../src/description/read-description.js';
import { canonicalRef, deref, isObject, type Json, type JsonObject } from '../../src/description/json-pointer.js';
import { startServe, useTempDir } from '../helpers/cli.js';
import { apiKeyOf, OPENAPI_FIXTURES, runImport } from '../helpers/openapi.js';

const temp = useTempDir('mockapi-openapi-corpus-', { each: true });

interface Endpoint {
  openapi?: string;
  method: string;
  path: string;
}

const pointer = (...tokens: string[]): string =>
  tokens.map((t) => `/${t.replace(/~/g, '~0').replace(/\//g, '~1')}`).join('');

/** A request path for a route: each parameter filled with `1`, a literal `::` sent as `:`. */
const requestPath = (route: string): string =>
  route.replace(/::|:[A-Za-z_][A-Za-z0-9_]*/g, (m) => (m === '::' ? ':' : '1'));

/**
 * A description's schemas as Ajv reads them for a response: each `$ref` rewritten to cross no other
 * `$ref` (bundlers write such paths; a JSON pointer alone does not follow them), writeOnly
 * properties not required (a response never carries them), and for 3.0 `nullable: true` as a
 * `null` in `type` (Ajv refuses `nullable` without `type`).
 */
function forAjv(doc: JsonObject, is30: boolean): unknown {
  const convert = (value: unknown): unknown => {
    if (Array.isArray(value)) return value.map(convert);
    if (value === null || typeof value !== 'object') return value;
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(value)) if (!(is30 && k === 'nullable')) out[k] = convert(v);
    if (typeof out.$ref === 'string') out.$ref = canonicalRef(doc, out.$ref) ?? out.$ref;
    const { nullable, type } = value as { nullable?: unknown; type?: unknown };
    if (is30 && nullable === true && typeof type === 'string') out.type = [type, 'null'];
    if (is30 && nullable === true && Array.isArray(out.enum) && !out.enum.includes(null))
      out.enum = [...out.enum, null];
    const properties = out.properties as Record<string, { writeOnly?: unknown }> | undefined;
    if (Array.isArray(out.required) && properties !== null && typeof properties === 'object') {
      out.required = out.required.filter((name) => properties[name as string]?.writeOnly !== true);
    }
    return out;
  };
  return convert(doc);
}

/** An example value with its `$ref`s followed (descriptions put them inside values). */
function resolveRefs(doc: JsonObject, value: Json, depth = 0): Json {
  if (Array.isArray(value)) return value.map((v) => resolveRefs(doc, v, depth));
  if (!isObject(value)) return value;
  if (typeof value.$ref === 'string' && depth < 16) return resolveRefs(doc, deref(doc, value) as Json, depth + 1);
  return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, resolveRefs(doc, v, depth)]));
}

/**
 * How many GET answers of each description break their response schema because the description's
 * own example does (GitHub's examples predate fields its schemas later made required, such as a
 * team's `type`; Blockfrost's utxo examples lack the required `tx_index`, its pools/extended example
 * holds a schema where a number goes, its xpub example is a list where the schema wants an object).
 * mockapi serves examples as written; the test checks each of these examples fails on its own.
 */
const EXAMPLES_BREAKING_SCHEMA: Record<string, number> = { 'blockfrost/openapi.yaml': 5, 'github/openapi.yaml': 20 };
/** The same for the answers to `Prefer: code=<status>` (GitHub's 202 `accepted` example is `null` where its schema wants an object). */
const CODE_EXAMPLES_BREAKING_SCHEMA: Record<string, number> = { 'github/openapi.yaml': 4 };

/**
 * fetch(), sent once more on a new connection when the kept-alive one was closed under it: the
 * server closes a connection idle for 5 s, and on a busy machine this process can spend that long
 * compiling a schema between two requests (undici may then write on a socket the server is closing).
 */
function fetchAgain(url: string, init: RequestInit): Promise<Response> {
  return fetch(url, init).catch(() => fetch(url, init));
}

describe('real descriptions: every GET answer satisfies its response schema', () => {
  test.each([
    ['petstore.yaml'],
    ['petstore-expanded.yaml'],
    ['api-with-examples.yaml'],
    ['uspto.yaml'],
    ['galaxy-3.1.yaml'],
    ['blockfrost/openapi.yaml'],
    ['github/openapi.yaml'],
    ['named/openapi.yaml'],
  ])(
    '%s',
    async (name) => {
      const spec = join(OPENAPI_FIXTURES, name);
      const config = join(temp.path, 'mockapi.yaml');
      expect((await runImport(spec, config)).code).toBe(0);
      const read = await readDescription(spec);
      if (!read.ok) throw new Error(read.message);
      const doc = read.doc;
      const ajv = read.version.startsWith('3.1')
        ? new Ajv2020({ strict: false, validateFormats: false })
        : new Ajv({ strict: false, validateFormats: false });
      ajv.addSchema(forAjv(doc, read.version.startsWith('3.0')) as object, 'doc');
      const endpoints = (parse(await readFile(config, 'utf8')) as { endpoints: Endpoint[] }).endpoints.filter(
        (e) => e.method === 'GET' && e.openapi !== undefined,
      );
      const key = await apiKeyOf(config);
      const server = await startServe(['-c', config, '--no-state', '--log', 'off']);
      const brokenExamples: string[] = [];
      let checked = 0;
      let codesChecked = 0;
      const brokenCodeExamples: string[] = [];
      /** Holds an answer to its response schema: true valid, false the description's own example breaking it, undefined nothing to hold it to. */
      const judge = async (res: Response, template: string, label: string): Promise<boolean | undefined> => {
        const text = await res.text();
        const responses = ((doc.paths as JsonObject)[template] as JsonObject & { get: { responses: JsonObject } }).get
          .responses;
        const code = [String(res.status), `${String(res.status)[0]}XX`, 'default'].find(
          (c) => responses[c] !== undefined,
        ) as string;
        const type = (res.headers.get('content-type') ?? '').split(';')[0] as string;
        const response = deref(doc, responses[code] as Json) as JsonObject & {
          content?: Record<string, { schema?: unknown }>;
        };
        const at =
          response?.content?.[type] !== undefined
            ? type
            : Object.keys(response?.content ?? {}).find((t) => t === '*/*');
        if (at === undefined || response.content?.[at]?.schema === undefined) return undefined; // nothing to hold it to
        const canonical =
          canonicalRef(doc, `#${pointer('paths', template, 'get', 'responses', code, 'content', at, 'schema')}`) ?? '';
        const validate = ajv.getSchema(`doc${canonical}`);
        if (validate === undefined) throw new Error(`no schema for ${label}`);
        const body = /json/.test(type) ? JSON.parse(text) : text;
        if (validate(body)) return true;
        // An answer that breaks its schema must be the description's own example (of the media type or
        // of its schema), served as written, which breaks the schema just as much; a generated body never may.
        const media = deref(doc, response.content?.[at] as Json) as JsonObject;
        const examples = deref(doc, media.examples as Json);
        const first = isObject(examples) ? deref(doc, Object.values(examples)[0]) : undefined;
        const schema = deref(doc, media.schema);
        const schemaExample = isObject(schema) ? schema.example : undefined;
        const example = Object.hasOwn(media, 'example') ? media.example : isObject(first) ? first.value : schemaExample;
        expect(
          example,
          `${label}: a generated answer breaks its schema: ${ajv.errorsText(validate.errors)}`,
        ).toBeDefined();
        expect(validate(resolveRefs(doc, example as Json)), `${label}: served other than its example`).toBe(false);
        return false;
      };
      try {
        for (const endpoint of endpoints) {
          const template = (endpoint.openapi as string).slice('GET '.length);
          const url = `${server.mock}${requestPath(endpoint.path)}`;
          const verdict = await judge(
            await fetchAgain(url, { headers: { 'x-api-key': key } }),
            template,
            endpoint.openapi as string,
          );
          if (verdict !== undefined) checked++;
          if (verdict === false) brokenExamples.push(endpoint.openapi as string);
          // Every other response with a status of its own answers `Prefer: code=<status>` with that status.
          const responses = deref(
            doc,
            ((doc.paths as JsonObject)[template] as JsonObject & { get: { responses: Json } }).get.responses,
          ) as JsonObject;
          const lowest = Object.keys(responses)
            .filter((c) => /^[1-5]\d\d$/.test(c))
            .sort()[0];
          const defaultStatus =
            Object.keys(responses)
              .filter((c) => /^2\d\d$/.test(c))
              .sort()[0] ?? (responses['2XX'] !== undefined || responses.default !== undefined ? '200' : lowest);
          for (const code of Object.keys(responses).filter((c) => /^[2-5]\d\d$/.test(c) && c !== defaultStatus)) {
            const res = await fetchAgain(url, {
              redirect: 'manual',
              headers: { 'x-api-key': key, prefer: `code=${code}` },
            });
            expect(res.status, `${endpoint.openapi} Prefer: code=${code}`).toBe(Number(code));
            const judged = await judge(res, template, `${endpoint.openapi} code=${code}`);
            if (judged !== undefined) codesChecked++;
            if (judged === false) brokenCodeExamples.push(`${endpoint.openapi} code=${code}`);
          }
        }
      } finally {
        await server.stop();
      }
      console.log(
        `${name}: ${checked - brokenExamples.length}/${checked} GET answers valid (${endpoints.length} GET operations); ${brokenExamples.length} break their schema as the description's own example does: ${brokenExamples.join(', ')}`,
      );
      console.log(
        `${name}: ${codesChecked - brokenCodeExamples.length}/${codesChecked} answers to Prefer: code=<status> valid; ${brokenCodeExamples.length} are the description's own examples breaking their schema: ${brokenCodeExamples.join(', ')}`,
      );
      expect(brokenExamples.length).toBe(EXAMPLES_BREAKING_SCHEMA[name] ?? 0);
      expect(brokenCodeExamples.length).toBe(CODE_EXAMPLES_BREAKING_SCHEMA[name] ?? 0);
    },
    240_000,
  ); // github: ~300 answers checked, beside other files on two cores
});
