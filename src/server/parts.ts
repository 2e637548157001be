// Every part a server's start has built before it answers (src/mock-server.ts): what the admin API,
// the request handler, the listeners and the server's object are wired from.
import type { CapabilityParts } from './capabilities.js';
import type { Foundation } from './foundation.js';
import type { LimitParts } from './limits.js';
import type { ServedParts } from './runtime.js';

export type ServerParts = Foundation & ServedParts & LimitParts & CapabilityParts;
