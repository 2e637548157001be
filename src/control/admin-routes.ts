/**
 * What a capability registers with the admin API: its routes by path and method, the session a
 * call acts on, and an answer with a status other than 200; mergeRoutes puts the tables together.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { ControlPlane } from './control-plane.js';
import type { OtherWorkers } from './other-workers.js';

/** The session an admin call acts on: its id (`''` for the default session) and its control plane. */
export interface AdminSession {
  readonly id: string;
  readonly plane: ControlPlane;
  /** A named session on a host of a fleet: its journal and writes across every host (src/fleet/). */
  readonly others?: OtherWorkers | undefined;
  /** Settles once the session's parts can answer (on a fleet: its shared parts taken); undefined when they can now. */
  readonly ready?: Promise<void> | undefined;
}

/**
 * How the admin API finds the session a call names (src/sessions gives it): the default session
 * for `''`; a named one made on first use. Throws a {@link ControlError} for an id that is not one
 * (400) or when there are `sessions.max` sessions already (429 `too_many_sessions`).
 */
export type SessionLookup = (id: string) => AdminSession;

/**
 * One admin call: resolves to the JSON answered with 200, an {@link AdminAnswer} for another
 * status, or throws a {@link ControlError}. `rest` is what a `name/*` route's `*` stands for;
 * `session` the session the call acts on (what a capability keeps per session is looked up by its id).
 */
export type Route = (
  req: IncomingMessage,
  res: ServerResponse,
  query: URLSearchParams,
  rest: string,
  session: AdminSession,
) => Promise<unknown> | unknown;

/** Admin calls by path under `/__mockapi/` (`stubs`, `stubs/*`) and method: what a capability registers. */
export type RouteTable = Record<string, Partial<Record<string, Route>>>;

/** An admin answer with a status other than 200 (201 for a created stub, 400 with a body of its own). */
export class AdminAnswer {
  constructor(
    readonly status: number,
    readonly body: unknown,
  ) {}
}

/** What the admin API's own routes return when they wrote the answer themselves (the inspector, an event stream). */
export const STREAMING = Symbol('streaming');

/** Merges route tables: a path's methods from every table (a later table adds methods, it does not replace the path). */
export function mergeRoutes(...tables: RouteTable[]): RouteTable {
  // Without a prototype (the table and each path's methods): a path such as `constructor` or
  // `__proto__`, or a method such as `toString`, finds nothing, never an Object.prototype member.
  const merged: RouteTable = Object.create(null) as RouteTable;
  for (const table of tables)
    for (const [path, methods] of Object.entries(table))
      merged[path] = Object.assign(Object.create(null) as RouteTable[string], merged[path], methods);
  return merged;
}
