/** HTTP methods an endpoint may be configured for (upper case once loaded). */
export const HTTP_METHODS = ['GET', 'POST', 'PUT', 'PATCH', 'DELETE', 'HEAD', 'OPTIONS'] as const;
export type HttpMethod = (typeof HTTP_METHODS)[number];

/** What an endpoint answers with, after defaults are applied. */
export interface ResponseConfig {
  status: number;
  headers: Record<string, string>;
  /** Any YAML value (sent as JSON) or a string (sent as text). Absent = empty body. */
  body?: unknown;
  /** Absolute path of the body file (resolved against the config file's folder). */
  bodyFile?: string;
}

export interface EndpointConfig {
  method: HttpMethod;
  /** As written in the config, e.g. `/users/:id` or `/files/*`. */
  path: string;
  /** Probability 0–1 of answering with the simulated 500. */
  failRate: number;
  /** Milliseconds to wait before answering. */
  delayMs: number;
  response: ResponseConfig;
}

export interface RateLimitConfig {
  requests: number;
  windowMs: number;
}

export interface LimitsConfig {
  rateLimit?: RateLimitConfig;
  monthlyQuota?: number;
}

export interface ServerConfig {
  port: number;
  host: string;
  cors: boolean;
  maxBodySize: number;
  /** Requests kept in the request journal; 0 = no journal. */
  journal: number;
}

/** A validated config with every default applied. Immutable once built. */
export interface Config {
  /** Absolute path of the config file, or undefined for a config given as an object. */
  file?: string;
  /** Folder that relative paths (bodyFile, state) are resolved against. */
  dir: string;
  project: string;
  apiKey: string;
  server: ServerConfig;
  seed?: number;
  limits: LimitsConfig;
  endpoints: EndpointConfig[];
  /** sha256 hex of the config file's bytes (or of the canonical JSON for an object config). */
  revision: string;
}

/** One problem found in a config file. `path` is the field, e.g. `endpoints[1].failRate`. */
export interface ConfigIssue {
  file: string;
  line: number;
  column: number;
  path: string;
  message: string;
}

export type LoadResult = { ok: true; config: Config } | { ok: false; issues: ConfigIssue[] };
