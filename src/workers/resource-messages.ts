/**
 * What a `serve --workers` worker without a shared store asks the primary about resources, and
 * the primary's reply: the primary keeps the one set of objects, moves due and idempotency keys
 * (an in-memory store) and answers each operation in turn, so each is atomic across the workers.
 * A reply names the request it answers by its number. Everything crosses as JSON: a page's filter
 * (a function) does not — the worker asks for the candidates and filters them itself.
 */

/** Worker → primary: one store operation (`op`) with its arguments. */
export interface StoreRequest {
  type: 'mockapi:store';
  id: number;
  op: string;
  args: unknown[];
}

/** Primary → worker: the operation's result, or why it failed. */
export interface StoreReply {
  type: 'mockapi:stored';
  id: number;
  result?: unknown;
  error?: string;
}

export function isStoreRequest(message: unknown): message is StoreRequest {
  return typeof message === 'object' && message !== null && (message as { type?: unknown }).type === 'mockapi:store';
}

export function isStoreReply(message: unknown): message is StoreReply {
  return typeof message === 'object' && message !== null && (message as { type?: unknown }).type === 'mockapi:stored';
}
