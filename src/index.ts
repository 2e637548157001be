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
export { startMockServer, ConfigError, ListenError, TlsSetupError } from './mock-server.js';
export type { MockServer, MockServerOptions, ReloadResult, HttpsOption } from './mock-server.js';
export type { Config, ConfigIssue, EndpointConfig } from './config/types.js';
export type { LogFormat } from './http/request-log.js';
export { ControlError, WaitTimeoutError } from './control/control-error.js';
export type { ControlCalls } from './control/calls.js';
export type { JournalEntry, Step } from './control/journal-entry.js';
export type { RequestFilter } from './control/journal.js';
export type { Violation } from './validate/violations.js';
export type { WaitOptions } from './control/wait.js';
export type { UsageReport, ResetParts, ResetResult, EndpointInfo } from './control/control-plane.js';
export { StubInvalidError } from './stubs/stub-error.js';
export type { StubCalls, StubHandle, StubOptions } from './stubs/calls.js';
export type { StubInfo, StubCreated } from './stubs/store.js';
export type { StubIssue } from './stubs/validate.js';
export { DeliveryWaitTimeout } from './webhooks/wait-timeout.js';
export type { WebhookCalls } from './webhooks/calls.js';
export type { SessionCalls } from './sessions/calls.js';
export type { SessionCreated, SessionInfo } from './sessions/routes.js';
export type { CollectionCalls, ResourceCalls } from './resources/calls.js';
export type { CollectionContents, CollectionInfo } from './resources/admin.js';
export type { HistoryEntry } from './resources/store.js';
export type { Delivery, DeliveryAttempt, DeliveryFilter, DeliveryStatus } from './webhooks/log.js';
export type { TargetInfo, TriggerInput } from './webhooks/service.js';
