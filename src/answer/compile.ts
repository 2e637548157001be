import { readFile } from 'node:fs/promises';
import { extname } from 'node:path';
import type { Config, EndpointConfig, HttpMethod } from '../config/types.js';
import { ANY_ORIGIN } from './cors.js';
import { createKeyMatcher, type KeyMatcher } from '../pipeline/auth.js';
import { createRouter, sameRoutes, type Router } from '../pipeline/match.js';
import { rateLimitHeaders } from '../pipeline/rate-limit.js';
import { healthBody, JSON_CONTENT_TYPE, TEXT_CONTENT_TYPE } from './responses.js';

/** An endpoint ready to answer: everything a request needs is computed here, once per load. */
export interface CompiledEndpoint {
  /** `GET /users/:id` — identifies the endpoint for seeded failures and logs. */
  key: string;
  method: HttpMethod;
  path: string;
  failRate: number;
  delayMs: number;
  status: number;
  /** Flat `[name, value, …]` list, content-type and content-length included. */
  headers: string[];
  /**
   * The whole header list of the usual answer (a request with no Origin to echo), precomputed so a
   * request builds no array: `headers`, then RateLimit-* when a rate limit is configured, then the
   * `*` CORS headers when CORS is on. The three RateLimit-* values (see `rateSlot`) are written in
   * place by each answer just before `writeHead`, which turns the list into the response head
   * before returning; nothing else keeps the list, and nothing else writes to it.
   */
  answerHeaders: string[];
  /** Index in `answerHeaders` of the RateLimit-Limit value (Remaining's is +2, Reset's +4); -1 without a rate limit. */
  rateSlot: number;
  body: Buffer;
}

/** A config compiled for serving. A reload builds a new one and swaps a single reference. */
export interface CompiledConfig {
  config: Config;
  key: KeyMatcher;
  router: Router;
  endpoints: CompiledEndpoint[];
  health: Buffer;
  /** Absolute paths of the body files this config reads (watched for hot reload). */
  bodyFiles: string[];
}

const CONTENT_TYPES: Record<string, string> = {
  '.json': JSON_CONTENT_TYPE,
  '.txt': TEXT_CONTENT_TYPE,
  '.html': 'text/html; charset=utf-8',
  '.htm': 'text/html; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.mjs': 'text/javascript; charset=utf-8',
  '.xml': 'application/xml; charset=utf-8',
  '.csv': 'text/csv; charset=utf-8',
  '.yaml': 'application/yaml; charset=utf-8',
  '.yml': 'application/yaml; charset=utf-8',
  '.md': 'text/markdown; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.jpg': 'image/jpeg',
  '.jpeg': 'image/jpeg',
  '.gif': 'image/gif',
  '.webp': 'image/webp',
  '.pdf': 'application/pdf',
  '.zip': 'application/zip',
};

/** Statuses that must not carry a body (RFC 9110). */
function isBodiless(status: number): boolean {
  return status < 200 || status === 204 || status === 304;
}

async function readBody(endpoint: EndpointConfig): Promise<{ body: Buffer; contentType?: string }> {
  const { body, bodyFile } = endpoint.response;
  if (bodyFile !== undefined) {
    const type = CONTENT_TYPES[extname(bodyFile).toLowerCase()] ?? 'application/octet-stream';
    return { body: await readFile(bodyFile), contentType: type };
  }
  if (body === undefined || body === null) return { body: Buffer.alloc(0) };
  if (typeof body === 'string') return { body: Buffer.from(body, 'utf8'), contentType: TEXT_CONTENT_TYPE };
  return { body: Buffer.from(JSON.stringify(body), 'utf8'), contentType: JSON_CONTENT_TYPE };
}

async function compileEndpoint(endpoint: EndpointConfig, config: Config): Promise<CompiledEndpoint> {
  const { status } = endpoint.response;
  let { body, contentType } = await readBody(endpoint);
  if (isBodiless(status)) {
    body = Buffer.alloc(0);
    contentType = undefined;
  }
  const headers: string[] = [];
  let hasContentType = false;
  for (const [name, value] of Object.entries(endpoint.response.headers)) {
    const lower = name.toLowerCase();
    // We always send the true length; framing and connection headers are Node's to set.
    if (lower === 'content-length' || lower === 'transfer-encoding' || lower === 'connection' || lower === 'keep-alive') continue;
    if (lower === 'content-type') hasContentType = true;
    headers.push(name, value);
  }
  if (!hasContentType && contentType !== undefined) headers.push('content-type', contentType);
  if (!isBodiless(status)) headers.push('content-length', String(body.length));
  const answerHeaders = headers.slice();
  let rateSlot = -1;
  if (config.limits.rateLimit !== undefined) {
    rateSlot = answerHeaders.length + 1;
    answerHeaders.push(...rateLimitHeaders({ limit: 0, remaining: 0, resetSeconds: 0 }));
  }
  if (config.server.cors) answerHeaders.push(...ANY_ORIGIN);
  return {
    key: `${endpoint.method} ${endpoint.path}`,
    method: endpoint.method,
    path: endpoint.path,
    failRate: endpoint.failRate,
    delayMs: endpoint.delayMs,
    status,
    headers,
    answerHeaders,
    rateSlot,
    body,
  };
}

/**
 * Turns a validated config into what the request handler reads: a router, the key matcher and
 * every response body and header list, so that no request computes them again.
 * Rejects when a body file cannot be read (the caller keeps the last good config).
 */
export async function compileConfig(config: Config, previous?: CompiledConfig): Promise<CompiledConfig> {
  const endpoints = await Promise.all(config.endpoints.map((endpoint) => compileEndpoint(endpoint, config)));
  // Building the radix tree is most of a big config's compile (10,000 routes: ~80 ms); an edit that
  // keeps every method and path (a body, a status, the limits) keeps the tree.
  const router = previous !== undefined && sameRoutes(previous.endpoints, endpoints) ? previous.router : createRouter(endpoints);
  return {
    config,
    key: createKeyMatcher(config.apiKey),
    router,
    endpoints,
    health: healthBody(config.revision, endpoints.length),
    bodyFiles: config.endpoints.flatMap((e) => (e.response.bodyFile === undefined ? [] : [e.response.bodyFile])),
  };
}
