import type { Config, EndpointConfig } from '../config/types.js';
import { loadFaker } from '../expression/faker.js';
import { createKeyMatcher, type KeyMatcher } from '../pipeline/auth.js';
import { createRouter, sameRoutes, type Router } from '../pipeline/match.js';
import { createLimitStyle, type LimitStyle, type StyleExtras } from '../pipeline/limit-headers.js';
import { createRedactor, type Redactor } from '../redact/redactor.js';
import { healthBody } from './responses.js';
import { withSecrets } from '../redact/with-secrets.js';
import type { AnswerParts, ConfigParts } from './parts.js';
import { compileErrors, type CompiledErrors } from './error-answers.js';
import { compileServerHeaders, type ServerHeaders } from './server-headers.js';
import { serverHeaderOptions } from '../config/server-headers.js';
import { DEFAULT_BASE_PATH } from '../config/build-lookalike.js';
import type { AuthSource } from '../config/types.js';
import { compileEndpoint, endpointBodyFiles, type CompiledEndpoint } from './compile-endpoint.js';

export {
  compileEndpoint,
  prepareAnswerHeaders,
  type CompiledEndpoint,
  type PreparedHeaders,
} from './compile-endpoint.js';

/** A config compiled for serving. A reload builds a new one and swaps a single reference. */
export interface CompiledConfig extends ConfigParts {
  config: Config;
  key: KeyMatcher;
  /** Scrubs this config's key, and the key served before it (after a rotation), from logs and the journal. */
  redactor: Redactor;
  router: Router;
  endpoints: CompiledEndpoint[];
  health: Buffer;
  /** Whether an endpoint has limits of its own (`endpoints[].limits`): requests then look the endpoint up before the limit steps. */
  endpointLimits: boolean;
  /** Whether some limits have `meters:` (`limits`, a plan): requests then look their endpoint's `cost:` up before the limit steps. */
  metered: boolean;
  /** `limits.headers` / `limits.quotaRetryAfter`; undefined for the defaults, which the precomputed lists serve. */
  limitStyle?: LimitStyle;
  /** Absolute paths of the body files this config reads (watched for hot reload). */
  bodyFiles: string[];
  /** The stamp (size, time, inode) of the OpenAPI description file when this config was compiled, when `openapi.spec` is set. */
  descriptionStamp?: string;
  /** `server.basePath` without its trailing `/` (`/mock`; `` for the root). */
  basePath: string;
  /** `basePath` + `/`: what a mock path starts with. */
  basePrefix: string;
  /** `auth.accept`, when the config sets it (else the default list, served by the per-connection auth). */
  accept?: readonly AuthSource[];
  /** `errors:` compiled; undefined when the config reshapes none of mockapi's answers. */
  errors?: CompiledErrors;
  /** `server.headers` compiled; undefined when the config sets none (answers carry no more than before). */
  serverHeaders?: ServerHeaders;
}

/** Options of {@link compileConfig}. */
export interface CompileOptions {
  /** The capabilities' compile steps (src/answer-parts.ts). */
  parts: AnswerParts;
  /** Where `env.MOCKAPI_*` is read from, once per load. Default `process.env`. */
  env?: Readonly<Record<string, string | undefined>>;
  /**
   * When the OpenAPI description (`openapi.spec`) is read: before the compile ends (`now`, the
   * default: it rejects when the description cannot be used), or when first wanted (`later`: the
   * start of `serve`: the first request that needs it reads it).
   */
  description?: 'now' | 'later';
}

/**
 * Turns a validated config into what the request handler reads: a router, the key matcher and
 * every response body and header list, so that no request computes them again.
 * Rejects when a body file cannot be read (the caller keeps the last good config).
 */
export async function compileConfig(
  config: Config,
  previous: CompiledConfig | undefined,
  options: CompileOptions,
): Promise<CompiledConfig> {
  const { parts } = options;
  const env = options.env ?? process.env;
  const limitStyle = createLimitStyle(config.limits, styleExtras(config));
  const reusable = reusableEndpoints(config, previous);
  const endpoints = await Promise.all(
    config.endpoints.map(
      (endpoint) => reusable?.get(endpoint) ?? compileEndpoint(endpoint, config, env, limitStyle, parts),
    ),
  );
  // faker costs ~30–110 ms to load: only a config that calls `fake.` pays it, before it is served.
  const errors = compileErrors(config, env);
  const serverHeaders = compileServerHeaders(
    config.server.headers,
    serverHeaderOptions(Object.keys(config.scenarios), env),
  );
  if (
    endpoints.some((e) => e.dynamic?.usesFaker === true) ||
    errors?.usesFaker === true ||
    serverHeaders?.usesFaker === true
  )
    await loadFaker();
  // The OpenAPI description and ajv load only for a config with `openapi.spec`; ajv with the first schema a request needs.
  const validation = config.openapi === undefined ? undefined : await parts.validation(config, options.description);
  validation?.endpoints.forEach((v, i) => v !== undefined && (endpoints[i]!.validation = v));
  // Building the radix tree is most of a big config's compile (10,000 routes: ~80 ms); an edit that
  // keeps every method and path (a body, a status, the limits) keeps the tree.
  const router =
    previous !== undefined && sameRoutes(previous.endpoints, endpoints) ? previous.router : createRouter(endpoints);
  const webhooks = parts.webhooks(config.webhooks, { env, scenarios: Object.keys(config.scenarios) });
  return {
    config,
    key: createKeyMatcher(config.apiKey, config.keys, config.authAccept),
    redactor: withSecrets(
      redactorFor(config, previous).withPlaces(secretPlaces(config.authAccept)),
      webhooks?.secrets ?? [],
    ),
    ...(webhooks === undefined ? {} : { webhooks }),
    router,
    endpoints,
    health: healthBody(config.revision, endpoints.length),
    endpointLimits: endpoints.some((e) => e.rateLimit !== undefined),
    metered: config.limits.meters !== undefined || (config.keys ?? []).some((k) => k.limits.meters !== undefined),
    ...(limitStyle === undefined ? {} : { limitStyle }),
    ...(validation === undefined ? {} : { descriptionStamp: validation.stamp }),
    // The description is watched like a body file.
    bodyFiles: [
      ...new Set([
        ...config.endpoints.flatMap(endpointBodyFiles),
        ...(config.openapi === undefined ? [] : [config.openapi.spec]),
      ]),
    ],
    basePath: config.server.basePath ?? DEFAULT_BASE_PATH,
    basePrefix: `${config.server.basePath ?? DEFAULT_BASE_PATH}/`,
    ...(config.authAccept === undefined ? {} : { accept: config.authAccept }),
    ...(errors === undefined ? {} : { errors }),
    ...(serverHeaders === undefined ? {} : { serverHeaders }),
  };
}

/** What beside `limits` shapes a config's limit headers: `limitHeaders:` and every meter (of `limits` and the keys' plans). */
export function styleExtras(config: Config): StyleExtras {
  const meters = [...(config.limits.meters ?? []), ...(config.keys ?? []).flatMap((k) => k.limits.meters ?? [])];
  return { ...(config.limitHeaders === undefined ? {} : { providers: config.limitHeaders }), meters };
}

/**
 * The compiled endpoints of `previous` that `config` may serve as they are: a reload reuses the
 * endpoint objects built from unchanged data (config/build.ts), and a static one's compiled form
 * depends only on it, the limits and their headers' style (header lists) and `server.cors` (the scenario names must match
 * too, to be safe) — unless it reads a body file
 * (which may be what changed) or requests are validated (`openapi:`). Undefined when none can be.
 */
function reusableEndpoints(
  config: Config,
  previous: CompiledConfig | undefined,
): Map<EndpointConfig, CompiledEndpoint> | undefined {
  if (previous === undefined || config.openapi !== undefined || previous.config.openapi !== undefined) return undefined;
  const before = previous.config;
  if (before.server.cors !== config.server.cors || JSON.stringify(before.limits) !== JSON.stringify(config.limits))
    return undefined;
  // The limit headers' style (`limitHeaders:`, the keys' meters) shapes the prepared lists too.
  if (JSON.stringify(styleExtras(before)) !== JSON.stringify(styleExtras(config))) return undefined;
  if (Object.keys(before.scenarios).join('\n') !== Object.keys(config.scenarios).join('\n')) return undefined; // (what a dynamic answer may name)
  const reusable = new Map<EndpointConfig, CompiledEndpoint>();
  before.endpoints.forEach((endpoint, i) => {
    const compiled = previous.endpoints[i];
    if (compiled !== undefined && compiled.dynamic === undefined && endpointBodyFiles(endpoint).length === 0)
      reusable.set(endpoint, compiled);
  });
  return reusable;
}

/** Every key the config serves (`apiKey` and `keys:`) registered with the one redactor, beside those served before. */
function redactorFor(config: Config, previous: CompiledConfig | undefined): Redactor {
  const others = config.keys?.map((k) => k.key) ?? [];
  return previous?.redactor.rotated(config.apiKey, others) ?? createRedactor([config.apiKey, ...others]);
}

/** The places `auth.accept` reads a key from, for the redactor: the values there are hidden whatever they hold. */
function secretPlaces(accept: readonly AuthSource[] | undefined): { headers: string[]; query: string[] } {
  const headers: string[] = [];
  const query: string[] = [];
  for (const source of accept ?? []) {
    if (source.kind === 'header') headers.push(source.name);
    else if (source.kind === 'query') query.push(source.name);
  }
  return { headers, query };
}
