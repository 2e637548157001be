/**
 * The `verify:` of an endpoint and the top-level `verify:` section, as the loaded config holds them:
 * plain data, built from what passed the schema and the rules (src/verify/rules.ts).
 */

/** The request of one verify example: sent to the real API and to the mock alike. */
export interface VerifyRequest {
  /** Values of the route's parameters (`{ id: '42' }` for `/users/:id`). */
  params: Record<string, string>;
  /** The whole path (`/users/42`) in place of `params`. */
  path?: string;
  /** Query parameters in order; a repeated parameter appears once per value. */
  query: Array<[string, string]>;
  headers: Record<string, string>;
  /** Present when the example has a body (it may be null). */
  body?: unknown;
  hasBody: boolean;
}

/** One example of `verify:`. */
export interface VerifyExample {
  name?: string;
  request: VerifyRequest;
  /** The status the real API should answer with; undefined: whatever the mock answers. */
  expect?: number;
  /** JSON paths or field names left out of this example's comparison. */
  ignore: string[];
}

/** The top-level `verify:` section. */
export interface VerifySettings {
  /** Ignored in every example's comparison. */
  ignore: string[];
}

type Obj = Record<string, unknown>;
const isObject = (v: unknown): v is Obj => v !== null && typeof v === 'object' && !Array.isArray(v);

function buildQuery(raw: unknown): Array<[string, string]> {
  if (!isObject(raw)) return [];
  const out: Array<[string, string]> = [];
  for (const [name, value] of Object.entries(raw)) {
    for (const v of Array.isArray(value) ? value : [value]) out.push([name, String(v)]);
  }
  return out;
}

function buildExample(raw: Obj): VerifyExample {
  const request = isObject(raw.request) ? raw.request : {};
  const example: VerifyExample = {
    request: {
      params: Object.fromEntries(
        Object.entries(isObject(request.params) ? request.params : {}).map(([k, v]) => [k, String(v)]),
      ),
      query: buildQuery(request.query),
      headers: Object.fromEntries(
        Object.entries(isObject(request.headers) ? request.headers : {}).map(([k, v]) => [k, String(v)]),
      ),
      hasBody: Object.hasOwn(request, 'body'),
    },
    ignore: Array.isArray(raw.ignore) ? raw.ignore.map(String) : [],
  };
  if (typeof request.path === 'string') example.request.path = request.path;
  if (example.request.hasBody) example.request.body = request.body;
  if (typeof raw.name === 'string') example.name = raw.name;
  if (typeof raw.expect === 'number') example.expect = raw.expect;
  return example;
}

/**
 * An endpoint's `verify:` as a list of examples: one example, a list, or `false` (an empty list:
 * left out on purpose). Undefined when the endpoint has none.
 */
export function buildVerify(raw: unknown): VerifyExample[] | undefined {
  if (raw === undefined || raw === null) return undefined;
  if (raw === false) return [];
  if (Array.isArray(raw)) return raw.filter(isObject).map(buildExample);
  return isObject(raw) ? [buildExample(raw)] : undefined;
}

/** The top-level `verify:` section, or undefined when absent. */
export function buildVerifySettings(raw: unknown): VerifySettings | undefined {
  if (!isObject(raw)) return undefined;
  return { ignore: Array.isArray(raw.ignore) ? raw.ignore.map(String) : [] };
}
