/**
 * `mockapi-cli/client`: the control calls of a mock server running in another process.
 *
 * ```ts
 * import { connectMockServer } from 'mockapi-cli/client';
 * const mock = connectMockServer('http://127.0.0.1:4010');
 * const [order] = await mock.waitForRequests({ method: 'POST', path: '/mock/orders' });
 * ```
 */
export { connectMockServer, type ConnectOptions } from './connect.js';
export { ControlError, WaitTimeoutError } from './control/control-error.js';
export type { ControlCalls } from './control/calls.js';
export type { JournalEntry, Step } from './control/journal-entry.js';
export type { RequestFilter } from './control/journal.js';
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
