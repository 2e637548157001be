import type { Envelope } from '../config/types-webhooks.js';
import type { ResourceStyle } from './model.js';

/**
 * What each style answers besides lists (list.ts): the create status, which methods update, what a
 * delete answers, and every error in the API's own shape — Stripe's `{"error":{type,code,message,
 * param}}`, GitHub's `{"message","documentation_url"}`, OpenAI's `{"error":{message,type,param,code}}`,
 * and a plain `{"error","message"}` for rest.
 */

/** An answer of a resource before the request's own headers: status and JSON text. */
export interface StyleAnswer {
  readonly status: number;
  /** JSON text; empty for 204. */
  readonly body: string;
}

/** How a collection of one style answers. */
export interface Style {
  readonly name: ResourceStyle;
  /** 200 (stripe, openai) or 201 with `Location` (github, rest). */
  readonly createStatus: number;
  readonly location: boolean;
  /** How a method on an object changes it: merge its fields, replace them, or not at all. */
  update(method: string): 'merge' | 'replace' | undefined;
  /** What a delete answers. */
  deleted(id: string, objectType: string): StyleAnswer;
  /** A missing object. */
  notFound(label: string, id: string): StyleAnswer;
  /** A request the API would refuse: a bad value (`param`), a malformed body. */
  invalid(message: string, param: string | null, code?: string): StyleAnswer;
  /** Whether request bodies are read as JSON whatever their content type (GitHub's API takes no form). */
  readonly jsonOnly: boolean;
  /** An action whose `when` does not hold: 400 in every style. */
  unexpectedState(code: string, message: string): StyleAnswer;
  /** An id already taken. */
  taken(label: string, id: string): StyleAnswer;
  /** An idempotency key sent again with another body (`mismatch`), or while its first request is answered. */
  idempotency(kind: 'mismatch' | 'in_flight', key: string): StyleAnswer;
  /** How events about its objects are wrapped when `webhooks.events` does not say. */
  readonly envelope: Envelope;
}

const json = (status: number, body: unknown): StyleAnswer => ({ status, body: JSON.stringify(body) });

const MISMATCH = (key: string): string =>
  `Keys for idempotent requests can only be used with the same parameters they were first used with. Try using a key other than '${key}' if you meant to execute a different request.`;
const IN_FLIGHT = (key: string): string =>
  `There is currently another in-progress request using this idempotent key (that probably means you submitted twice, and the other request is still going through): ${key}. Please try again later.`;

const stripe: Style = {
  name: 'stripe',
  createStatus: 200,
  location: false,
  jsonOnly: false,
  update: (method) => (method === 'POST' ? 'merge' : undefined),
  deleted: (id, objectType) => json(200, { id, object: objectType, deleted: true }),
  notFound: (label, id) =>
    json(404, {
      error: {
        code: 'resource_missing',
        message: `No such ${label}: '${id}'`,
        param: 'id',
        type: 'invalid_request_error',
      },
    }),
  invalid: (message, param, code) =>
    json(400, {
      error: {
        ...(code === undefined ? {} : { code }),
        message,
        ...(param === null ? {} : { param }),
        type: 'invalid_request_error',
      },
    }),
  unexpectedState: (code, message) => json(400, { error: { code, message, type: 'invalid_request_error' } }),
  taken: (label, id) =>
    json(400, {
      error: {
        code: 'resource_already_exists',
        message: `A ${label} with id '${id}' already exists.`,
        param: 'id',
        type: 'invalid_request_error',
      },
    }),
  idempotency: (kind, key) =>
    json(kind === 'mismatch' ? 400 : 409, {
      error: { message: kind === 'mismatch' ? MISMATCH(key) : IN_FLIGHT(key), type: 'idempotency_error' },
    }),
  envelope: 'stripe',
};

const GITHUB_DOCS = 'https://docs.github.com/rest';
const github: Style = {
  name: 'github',
  createStatus: 201,
  location: true,
  update: (method) => (method === 'PATCH' ? 'merge' : method === 'PUT' ? 'replace' : undefined),
  deleted: () => ({ status: 204, body: '' }),
  notFound: () => json(404, { message: 'Not Found', documentation_url: GITHUB_DOCS, status: '404' }),
  jsonOnly: true,
  invalid: (message, param, code) =>
    param === null
      ? json(400, { message, documentation_url: GITHUB_DOCS, status: '400' })
      : json(422, {
          message: 'Validation Failed',
          errors: [{ field: param, code: code ?? 'invalid', message }],
          documentation_url: GITHUB_DOCS,
          status: '422',
        }),
  // An action whose `when` does not hold is 400 in every style (the contract's words), in GitHub's shape.
  unexpectedState: (code, message) =>
    json(400, { message, errors: [{ code }], documentation_url: GITHUB_DOCS, status: '400' }),
  taken: (_label, id) =>
    json(422, {
      message: 'Validation Failed',
      errors: [{ field: 'id', code: 'already_exists', message: `${id} already exists` }],
      documentation_url: GITHUB_DOCS,
      status: '422',
    }),
  idempotency: (kind, key) =>
    json(kind === 'mismatch' ? 400 : 409, {
      message: kind === 'mismatch' ? MISMATCH(key) : IN_FLIGHT(key),
      documentation_url: GITHUB_DOCS,
      status: kind === 'mismatch' ? '400' : '409',
    }),
  envelope: 'github',
};

const openai: Style = {
  name: 'openai',
  createStatus: 200,
  location: false,
  jsonOnly: false,
  update: (method) => (method === 'POST' ? 'merge' : undefined),
  deleted: (id, objectType) => json(200, { id, object: objectType, deleted: true }),
  notFound: (label, id) =>
    json(404, {
      error: { message: `No such ${label} object: ${id}`, type: 'invalid_request_error', param: null, code: null },
    }),
  invalid: (message, param, code) =>
    json(400, { error: { message, type: 'invalid_request_error', param, code: code ?? null } }),
  unexpectedState: (code, message) =>
    json(400, { error: { message, type: 'invalid_request_error', param: null, code } }),
  taken: (label, id) =>
    json(400, {
      error: {
        message: `A ${label} object with id ${id} already exists`,
        type: 'invalid_request_error',
        param: 'id',
        code: 'already_exists',
      },
    }),
  idempotency: (kind, key) =>
    json(kind === 'mismatch' ? 400 : 409, {
      error: {
        message: kind === 'mismatch' ? MISMATCH(key) : IN_FLIGHT(key),
        type: 'idempotency_error',
        param: null,
        code: null,
      },
    }),
  envelope: 'standard',
};

const rest: Style = {
  name: 'rest',
  createStatus: 201,
  location: true,
  jsonOnly: false,
  update: (method) => (method === 'PATCH' ? 'merge' : method === 'PUT' ? 'replace' : undefined),
  deleted: () => ({ status: 204, body: '' }),
  notFound: (label, id) => json(404, { error: 'not_found', message: `No ${label} with id '${id}'` }),
  invalid: (message, param) => json(400, { error: 'bad_request', message, ...(param === null ? {} : { param }) }),
  unexpectedState: (code, message) => json(400, { error: code, message }),
  taken: (label, id) => json(409, { error: 'conflict', message: `A ${label} with id '${id}' already exists` }),
  idempotency: (kind, key) =>
    json(kind === 'mismatch' ? 400 : 409, {
      error: 'idempotency_error',
      message: kind === 'mismatch' ? MISMATCH(key) : IN_FLIGHT(key),
    }),
  envelope: 'none',
};

export const STYLES: Readonly<Record<ResourceStyle, Style>> = { stripe, github, openai, rest };
