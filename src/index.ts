/**
 * mockapi's programmatic API, for test suites: start a mock server in a vitest or jest global setup.
 *
 * ```ts
 * import { startMockServer } from 'mockapi-cli';
 * const server = await startMockServer({ config: './mockapi.yaml', port: 0 });
 * // … requests to `${server.url}/mock/…` …
 * await server.close();
 * ```
 */
export { startMockServer, ConfigError, ListenError } from './mock-server.js';
export type { MockServer, MockServerOptions, ReloadResult } from './mock-server.js';
export type { Config, ConfigIssue, EndpointConfig } from './config/types.js';
export type { LogFormat } from './http/request-log.js';
