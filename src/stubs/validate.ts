import { buildConfig } from '../config/build.js';
import { formatFieldPath, type FieldPath } from '../config/field-path.js';
import { describeValue, type IssueList } from '../config/issues.js';
import { objectLocator } from '../config/locate.js';
import type { ServedNames } from '../config/rule-kit.js';
import { checkRules } from '../config/rules.js';
import { reportSchemaErrors } from '../config/schema-issues.js';
import { validateSchema } from '../config/schema-validator.generated.js';
import type { Config, EndpointConfig } from '../config/types.js';
import { DEFAULT_BASE_PATH } from '../config/build-lookalike.js';

/** One problem of a stub: where it is (a JSON pointer into the call's body, e.g. `/endpoint/response/status`) and what is wrong. */
export interface StubIssue {
  path: string;
  message: string;
}

/** A stub as asked for, checked: the endpoint built with every default applied. */
export interface StubRequest {
  endpoint: EndpointConfig;
  /** The endpoint as sent (JSON), shown back by the admin API. */
  raw: Record<string, unknown>;
  times: number | undefined;
  name: string | undefined;
}

export type StubCheck = { ok: true; stub: StubRequest } | { ok: false; issues: StubIssue[] };

/** Longest stub name; names appear in journal entries and log lines. */
export const MAX_STUB_NAME = 100;
const FIELDS = ['endpoint', 'times', 'name'];
const API_KEY_PLACEHOLDER = 'stub-check';

/** `endpoints[0]` of the config the stub is checked in is `endpoint` of the call's body. */
function stubPath(path: FieldPath): FieldPath {
  return path[0] === 'endpoints' && path[1] === 0 ? ['endpoint', ...path.slice(2)] : path;
}

function pointer(path: FieldPath): string {
  return path.map((segment) => `/${String(segment).replace(/~/g, '~0').replace(/\//g, '~1')}`).join('');
}

/** An issue list that reports the stub's fields: `endpoint.response.status must be …` at `/endpoint/response/status`. */
function createStubIssueList(): IssueList & { stubIssues: StubIssue[] } {
  const stubIssues: StubIssue[] = [];
  const reported = new Set<string>();
  return {
    issues: [],
    stubIssues,
    locator: objectLocator,
    report(path, message) {
      reported.add(formatFieldPath(path));
      const own = stubPath(path);
      const field = formatFieldPath(own);
      stubIssues.push({ path: pointer(own), message: field === '' ? `the stub ${message}` : `${field} ${message}` });
    },
    has: (path) => reported.size > 0 && reported.has(formatFieldPath(path)),
  };
}

/**
 * What a stub may name of the served config, as its endpoints may: its webhook events and targets
 * (`send`), the meters of its limits and plans (`cost:`) and its resources (`resources.<name>`).
 */
function servedNames(served: Config): ServedNames {
  const meters = new Set((served.limits.meters ?? []).map((m) => m.name));
  for (const key of served.keys ?? []) for (const meter of key.limits.meters ?? []) meters.add(meter.name);
  return {
    events: Object.keys(served.webhooks?.events ?? {}),
    targets: Object.keys(served.webhooks?.targets ?? {}),
    meters: [...meters],
    resources: (served.resources?.collections ?? []).map((c) => c.name),
  };
}

/**
 * A stub path that starts with the served base path (`/v1/x` on `basePath: /v1`) would answer at
 * `/v1/v1/x`, which no client calls: the problem, naming the base path and the path meant. None
 * when some endpoint of the config itself is written under the base path (it is meant so there).
 */
function basePathProblem(path: unknown, served: Config): string | undefined {
  const base = served.server.basePath ?? DEFAULT_BASE_PATH;
  if (typeof path !== 'string' || base === '' || !(path === base || path.startsWith(`${base}/`))) return undefined;
  if (served.endpoints.some((e) => e.path === base || e.path.startsWith(`${base}/`))) return undefined;
  const meant = path.slice(base.length) || '/';
  return `${JSON.stringify(path)} starts with the base path ${base}: a stub's path comes after it, as an endpoint's does, so this one would answer at ${base}${path}; write ${JSON.stringify(meant)} (it answers at ${base}${meant === '/' ? '' : meant})`;
}

/**
 * Checks the body of `POST /__mockapi/stubs` (`{"endpoint": …, "times"?: n, "name"?: "…"}`) by
 * the config's own schema and rules: the endpoint is checked as the only endpoint of a config that
 * has the served config's scenarios and folder, and may name what the served config declares
 * (webhook events and targets, meters, resources); a `bodyFile` must be a file inside that folder,
 * symbolic links resolved (it comes from a request). So every message is the one `mockapi
 * validate` would give, its field named from the body (`endpoint.response.status`).
 * `names` are the stub names in use: a name names one stub. `linkedFolders`: folders the config's
 * folder links into that a `bodyFile` may lead to (a test helper's copy links to the original's).
 */
export function checkStub(
  body: Record<string, unknown>,
  served: Config,
  names: { has(name: string): boolean },
  linkedFolders: readonly string[] = [],
): StubCheck {
  const issues = createStubIssueList();
  for (const key of Object.keys(body)) {
    if (!FIELDS.includes(key)) issues.report([key], `is not a known field; expected one of ${FIELDS.join(', ')}`);
  }
  const { times, name, endpoint } = body;
  if (
    times !== undefined &&
    times !== null &&
    (typeof times !== 'number' || !Number.isSafeInteger(times) || times < 1)
  ) {
    issues.report(['times'], `must be a whole number of at least 1, got ${describeValue(times)}`);
  }
  if (name !== undefined && name !== null) {
    if (typeof name !== 'string' || name.trim() === '')
      issues.report(['name'], `must be a non-empty string, got ${describeValue(name)}`);
    else if (name.length > MAX_STUB_NAME || /[\u0000-\u001f\u007f]/.test(name))
      issues.report(['name'], `must be at most ${MAX_STUB_NAME} characters, without control characters`);
    else if (names.has(name))
      issues.report(
        ['name'],
        `${describeValue(name)} is already the name of a stub; remove that one first or choose another name`,
      );
  }
  if (endpoint === undefined || endpoint === null)
    issues.report(['endpoint'], 'is required: one endpoints[] item of the config, as JSON');
  else if (typeof endpoint !== 'object' || Array.isArray(endpoint))
    issues.report(
      ['endpoint'],
      `must be a mapping (one endpoints[] item of the config), got ${describeValue(endpoint)}`,
    );
  else {
    const scenarios = Object.fromEntries(Object.entries(served.scenarios).map(([n, s]) => [n, { initial: s.initial }]));
    const data = { apiKey: API_KEY_PLACEHOLDER, scenarios, endpoints: [endpoint] };
    if (!validateSchema(data)) reportSchemaErrors(validateSchema.errors ?? [], data, issues);
    checkRules(data, {
      issues,
      dir: served.dir,
      bodyFilesInside: { also: linkedFolders },
      served: servedNames(served),
    });
    const underBase = basePathProblem((endpoint as { path?: unknown }).path, served);
    if (underBase !== undefined && !issues.has(['endpoints', 0, 'path']))
      issues.report(['endpoints', 0, 'path'], underBase);
  }
  if (issues.stubIssues.length > 0) return { ok: false, issues: issues.stubIssues };
  // A JSON copy: the built endpoint is frozen, the caller's object is left alone.
  const raw = JSON.parse(JSON.stringify(endpoint)) as Record<string, unknown>;
  const built = buildConfig({ apiKey: API_KEY_PLACEHOLDER, endpoints: [raw] }, served.dir, undefined, '');
  return {
    ok: true,
    stub: {
      endpoint: built.endpoints[0] as EndpointConfig,
      raw: JSON.parse(JSON.stringify(endpoint)) as Record<string, unknown>,
      times: typeof times === 'number' ? times : undefined,
      name: typeof name === 'string' ? name : undefined,
    },
  };
}
