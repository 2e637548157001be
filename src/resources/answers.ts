import { JSON_CONTENT_TYPE } from '../answer/responses.js';
import { textOf } from '../expression/values.js';
import type { CompiledResource } from './compile.js';
import { ResourceContext } from './context.js';
import type { StoredObject } from './store.js';
import type { StyleAnswer } from './styles.js';

/** What a resource answers: the status, its own headers (content type and length included) and body. */
export interface ResourceAnswer {
  readonly status: number;
  /** Name, value, name, value… (the request's limit and CORS headers are added by the step). */
  readonly headers: readonly string[];
  readonly body: string;
  /** The operation, for the journal's `response` (`customers.create`, `payment_intents.confirm`). */
  readonly label: string;
  /** Notes for the journal: the webhook deliveries the change caused. */
  readonly notes?: readonly string[];
  /** A missing object answered in the style's shape: the config's `errors.notFound` may reshape it. */
  readonly missing?: boolean;
  /** A body or parameter that cannot be read (a validation 400): an idempotency key does not keep it. */
  readonly invalid?: boolean;
  /** The objects the request wrote (their history names the request once it is journaled). */
  writes?: readonly StoredObject[];
}

/** No extra headers (most answers). */
export const NO_HEADERS: readonly string[] = Object.freeze([]);

/** A JSON answer with its content type and length. */
export function jsonAnswer(
  status: number,
  body: string,
  label: string,
  extra: readonly string[] = NO_HEADERS,
  notes?: readonly string[],
): ResourceAnswer {
  // (a new list each answer: the step adds the request's headers to it in place)
  let headers: string[];
  if (status === 204) headers = extra.slice();
  else {
    headers = ['content-type', JSON_CONTENT_TYPE, 'content-length', String(Buffer.byteLength(body))];
    for (const item of extra) headers.push(item);
  }
  // (literals, not spreads: a create's answer is made in one step, in one shape)
  if (notes === undefined || notes.length === 0) return { status, headers, body: status === 204 ? '' : body, label };
  return { status, headers, body: status === 204 ? '' : body, label, notes };
}

/** A style's answer (an error, a delete) as a resource answer. */
export function styleAnswer(answer: StyleAnswer, label: string): ResourceAnswer {
  return jsonAnswer(answer.status, answer.body, label);
}

/** What a missing object's answer needs to know. */
export interface Missing {
  readonly id: string;
  readonly method: string;
  /** The request path after the base path. */
  readonly path: string;
  readonly now: number;
}

/**
 * A missing object: the collection's own `errors.notFound` when it has one (reading `error.id`,
 * `error.resource`, `error.method`, `error.path`, `error.message`), else the style's 404.
 */
export function notFoundAnswer(resource: CompiledResource, missing: Missing, label: string): ResourceAnswer {
  const base = resource.style.notFound(resource.label, missing.id);
  const own = resource.notFound;
  if (own === undefined) return { ...styleAnswer(base, label), missing: true };
  const error = {
    status: base.status,
    message: messageOf(base.body),
    method: missing.method,
    path: missing.path,
    id: missing.id,
    resource: resource.name,
  };
  const ctx = new ResourceContext({
    params: {},
    query: '',
    headers: {},
    body: undefined,
    n: 0,
    now: missing.now,
    state: {},
    seed: 0,
    randomKey: `resource ${resource.name} notFound`,
  });
  Object.assign(ctx, { error, key: {} });
  const headers: string[] = [];
  let type = false;
  for (const [name, value] of own.headers) {
    if (name === 'content-type') type = true;
    headers.push(name, textOf(value.evaluate(ctx)));
  }
  const value = own.body === undefined ? undefined : own.body.evaluate(ctx);
  const body = value === undefined ? '' : type && typeof value === 'string' ? value : (JSON.stringify(value) ?? '');
  const status = own.status ?? base.status;
  return {
    status,
    headers: [
      ...(type ? [] : ['content-type', JSON_CONTENT_TYPE]),
      ...headers,
      'content-length',
      String(Buffer.byteLength(body)),
    ],
    body,
    label,
  };
}

function messageOf(body: string): string {
  try {
    const parsed = JSON.parse(body) as { message?: unknown; error?: { message?: unknown } };
    const message = parsed.message ?? parsed.error?.message;
    return typeof message === 'string' ? message : '';
  } catch {
    return '';
  }
}
