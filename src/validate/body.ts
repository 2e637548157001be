import type { IncomingHttpHeaders } from 'node:http';
import { MAX_BODY_DEPTH, nestsWithin } from '../http/request-body.js';
import { isObject, type JsonObject } from '../description/json-pointer.js';
import type { Operation } from '../description/description.js';
import { isFormType, parseFormBody, parseMultipart } from '../http/form-body.js';
import { encodeToken } from '../description/pointers.js';
import type { SchemaCheck, SchemaSet } from './schemas.js';
import type { Violation } from './violations.js';
import { numberGuideOf, strictByGuide, type NumberGuide } from './number-text.js';

/**
 * Reading and checking a request body against its operation's `requestBody`. What a content type
 * means for an operation (which media type it picks, how the body is read, which schema checks it)
 * depends only on the Content-Type's media type (what comes before any `;`): it is worked out once
 * per media type and kept with the operation, so a request with the usual `application/json` pays
 * only for its own check. (A multipart body's boundary, after the `;`, is read from each request.)
 */

/** How a body of one media type is read and checked. */
type BodyPlan =
  /** No media type of the operation takes it: the violation, the same for every such request. */
  | { kind: 'refused'; violation: Violation }
  /** Taken, but nothing to check (no schema, or a type that is not read); `part` names a schema that cannot be compiled. */
  | { kind: 'unchecked'; part?: string }
  /** `part`: `request body (application/json)`, the media type as the description writes it. */
  | {
      kind: 'json' | 'form' | 'multipart';
      pointer: string;
      part: string;
      check: SchemaCheck | undefined;
      /** A form's or a multipart body's fields are text: where its schema wants numbers (number-text.ts). */
      numbers?: NumberGuide;
    };

/** The request body of one operation, with the plans of the media types seen so far. */
export interface BodyRules {
  required: boolean;
  content: JsonObject;
  /** The media types of `content`: type and subtype in lower case, the media type, its key as written. */
  entries: ReadonlyArray<readonly [string, unknown, string]>;
  /** By the Content-Type's media type as sent, before any `;` (bounded: one beyond it is worked out each time). */
  plans: Map<string, BodyPlan>;
  bodyPointer: string;
  /** The description the schemas are in. */
  doc: JsonObject;
}

/** Most media types whose plan an operation keeps, and the longest one kept. */
const MAX_PLANS = 32;
const MAX_PLAN_KEY = 128;

/** The pointer of the media type `content` has for `type` under the request body at `bodyPointer`. */
export function mediaPointer(bodyPointer: string, type: string): string {
  return `${bodyPointer}/content/${encodeToken(type)}`;
}

const JSON_TYPE = /^[^;]*[/+]json\s*(;|$)/i;

/** The body rules of `operation`; undefined when it has no request body. */
export function bodyRules(operation: Operation, doc: JsonObject): BodyRules | undefined {
  const requestBody = operation.requestBody;
  if (requestBody === undefined) return undefined;
  const content = isObject(requestBody.content) ? requestBody.content : {};
  const entries = Object.entries(content).map(([k, v]) => [k.split(';')[0]!.trim().toLowerCase(), v, k] as const);
  return {
    required: requestBody.required === true,
    content,
    entries,
    plans: new Map(),
    bodyPointer: operation.requestBodyPointer as string,
    doc,
  };
}

/** The media type of `content` a request's content type picks: exact, then `type/*`, then `*\/*`. */
function mediaFor(entries: BodyRules['entries'], contentType: string): { media: JsonObject; type: string } | undefined {
  const wanted = contentType.trim().toLowerCase();
  const pick =
    entries.find(([k]) => k === wanted) ??
    entries.find(([k]) => k === `${wanted.split('/')[0]}/*`) ??
    entries.find(([k]) => k === '*/*');
  return pick !== undefined && isObject(pick[1]) ? { media: pick[1], type: pick[2] } : undefined;
}

/** The plan of a Content-Type whose media type (before any `;`, as sent) is `type`. */
function planFor(rules: BodyRules, type: string): BodyPlan {
  const picked = mediaFor(rules.entries, type);
  if (picked === undefined) {
    const accepted = Object.keys(rules.content).join(', ');
    return {
      kind: 'refused',
      violation: {
        in: 'body',
        pointer: '',
        param: null,
        keyword: 'contentType',
        message: `the body's content type ${JSON.stringify(type.trim())} is not one the operation accepts (${accepted})`,
      },
    };
  }
  if (picked.media.schema === undefined) return { kind: 'unchecked' };
  // Each pattern reads only what comes before the first `;`.
  const kind = JSON_TYPE.test(type)
    ? 'json'
    : isFormType(type)
      ? 'form'
      : /^\s*multipart\/form-data/i.test(type)
        ? 'multipart'
        : undefined;
  if (kind === undefined) return { kind: 'unchecked' };
  const numbers = kind === 'json' ? undefined : numberGuideOf(rules.doc, picked.media.schema);
  return {
    kind,
    pointer: `${mediaPointer(rules.bodyPointer, picked.type)}/schema`,
    part: `request body (${picked.type})`,
    check: undefined,
    ...(numbers === undefined ? {} : { numbers }),
  };
}

/** What a request gives its body check. */
export interface BodySource {
  headers: IncomingHttpHeaders;
  body: Buffer | undefined;
  /** The body as answers read it (parsed JSON, else text), when it was read: JSON is not parsed twice. */
  parsed?: unknown;
}

/**
 * Checks the request body of `input` against `rules`: pushes to `out` what is wrong before its
 * schema is reached (missing, a content type not taken, unreadable); returns the schema check that
 * failed (its `errors` are the body's violations), else undefined (also when the schema cannot be
 * compiled: then the body's part is pushed to `unchecked`).
 */
export function checkBody(
  set: SchemaSet,
  rules: BodyRules,
  input: BodySource,
  out: Violation[],
  unchecked?: string[],
): SchemaCheck | undefined {
  if (input.body === undefined || input.body.length === 0) {
    if (rules.required)
      out.push({ in: 'body', pointer: '', param: null, keyword: 'required', message: 'the body is required' });
    return undefined;
  }
  const header = input.headers['content-type'] ?? '';
  const semicolon = header.indexOf(';');
  const type = semicolon === -1 ? header : header.slice(0, semicolon);
  let plan = rules.plans.get(type);
  if (plan === undefined) {
    plan = planFor(rules, type);
    if (rules.plans.size < MAX_PLANS && type.length <= MAX_PLAN_KEY) rules.plans.set(type, plan);
  }
  if (plan.kind === 'refused') {
    out.push({ ...plan.violation });
    return undefined;
  }
  if (plan.kind === 'unchecked') {
    if (plan.part !== undefined) unchecked?.push(plan.part);
    return undefined;
  }
  const bytes = input.body;
  let value: unknown;
  if (plan.kind === 'json') {
    try {
      if (input.parsed !== undefined && typeof input.parsed !== 'string') value = input.parsed;
      else if (!nestsWithin(bytes, MAX_BODY_DEPTH)) throw new Error('too deep');
      else value = JSON.parse(bytes.toString('utf8'));
    } catch {
      out.push({ in: 'body', pointer: '', param: null, keyword: 'parse', message: 'the body is not valid JSON' });
      return undefined;
    }
  } else if (plan.kind === 'form') value = strictByGuide(plan.numbers, parseFormBody(bytes.toString('utf8')));
  else {
    value = parseMultipart(bytes, header);
    if (value === undefined) {
      out.push({
        in: 'body',
        pointer: '',
        param: null,
        keyword: 'parse',
        message: 'the multipart body cannot be read (no boundary)',
      });
      return undefined;
    }
    value = strictByGuide(plan.numbers, value);
  }
  // Compiled on first use. A schema ajv cannot compile leaves the body unchecked (and is not tried
  // again); the parameters are checked all the same. `mockapi validate` names it.
  if (plan.check === undefined) {
    try {
      plan.check = set.compileAt(plan.pointer, plan.kind !== 'json');
    } catch {
      rules.plans.set(type, { kind: 'unchecked', part: plan.part });
      unchecked?.push(plan.part);
      return undefined;
    }
  }
  return plan.check(value) ? undefined : plan.check;
}
