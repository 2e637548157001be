import { compileString, compileTemplate, isStatic } from '../expression/index.js';
import { ANSWER_KINDS } from './build-endpoints.js';
import type { FieldPath } from './field-path.js';
import { describeValue } from './issues.js';
import { checkDuration, type RuleContext } from './rule-kit.js';
import { checkDelay } from './rules-resilience.js';
import { suggestField } from '../suggest-field.js';
import { parseFailRate } from './units.js';

/**
 * The rules of webhooks a schema cannot express: URLs, secrets and `${…}` that compile, retry
 * durations, chaos rates, and every `send` naming a declared event and target — each at its line.
 */

type Obj = Record<string, unknown>;
const isObject = (v: unknown): v is Obj => v !== null && typeof v === 'object' && !Array.isArray(v);

function checkText(
  ctx: RuleContext,
  path: FieldPath,
  text: unknown,
  options: { allowResponse?: boolean; scenarios?: readonly string[] } = {},
): void {
  if (typeof text !== 'string' || ctx.issues.has(path) || !text.includes('${')) return;
  const result = compileString(text, options);
  if (!result.ok) ctx.issues.report(path, result.issue.message, ctx.issues.locator.textAt(path, result.issue.offset));
}

function checkData(ctx: RuleContext, path: FieldPath, data: unknown, scenarios: readonly string[]): void {
  if (data === undefined || ctx.issues.has(path) || isStatic(data)) return;
  const compiled = compileTemplate(data, { scenarios, allowResponse: true, path });
  if (compiled.ok) return;
  for (const issue of compiled.issues) {
    if (!ctx.issues.has(issue.path))
      ctx.issues.report(
        issue.path,
        issue.message,
        issue.offset === undefined ? undefined : ctx.issues.locator.textAt(issue.path, issue.offset),
      );
  }
}

function checkTarget(ctx: RuleContext, base: FieldPath, target: Obj): void {
  const urlPath = [...base, 'url'];
  if (typeof target.url === 'string' && !ctx.issues.has(urlPath)) {
    if (target.url.includes('${')) checkText(ctx, urlPath, target.url);
    else if (!isHttpUrl(target.url))
      ctx.issues.report(urlPath, `must be an http:// or https:// URL, got ${describeValue(target.url)}`);
  }
  if (isObject(target.sign)) {
    const secretPath = [...base, 'sign', 'secret'];
    const { scheme, secret } = target.sign;
    if (scheme !== 'none' && scheme !== undefined && secret === undefined && !ctx.issues.has([...base, 'sign'])) {
      ctx.issues.report([...base, 'sign'], `needs a \`secret\` for scheme ${String(scheme)}`);
    }
    if (typeof secret === 'string' && secret.includes('${')) checkText(ctx, secretPath, secret);
    else if (
      scheme === 'standard' &&
      typeof secret === 'string' &&
      !isStandardSecret(secret) &&
      !ctx.issues.has(secretPath)
    ) {
      ctx.issues.report(secretPath, 'must be `whsec_` followed by base64 (Standard Webhooks secrets)');
    }
    if (typeof target.sign.template === 'string')
      checkTemplateNames(ctx, [...base, 'sign', 'template'], target.sign.template);
  }
  if (isObject(target.retry)) {
    if (Array.isArray(target.retry.schedule))
      target.retry.schedule.forEach((d, i) => checkDuration(ctx, [...base, 'retry', 'schedule', i], d, false));
    if (target.retry.timeout !== undefined)
      checkDuration(ctx, [...base, 'retry', 'timeout'], target.retry.timeout, true);
  }
  if (isObject(target.chaos)) {
    for (const [name, value] of Object.entries(target.chaos)) {
      const at = [...base, 'chaos', name];
      if (typeof value === 'string' && !ctx.issues.has(at) && parseFailRate(value) === undefined)
        ctx.issues.report(at, `must be a percentage from 0% to 100%, got ${describeValue(value)}`);
    }
  }
}

/** `hmac`'s signed template reads `${timestamp}`, `${id}` and `${body}` only. */
function checkTemplateNames(ctx: RuleContext, path: FieldPath, template: string): void {
  for (const match of template.matchAll(/\$\{([^}]*)\}/g)) {
    const name = (match[1] ?? '').trim();
    if (!['timestamp', 'id', 'body'].includes(name) && !ctx.issues.has(path))
      ctx.issues.report(path, `can read \${timestamp}, \${id} and \${body}, not \${${name}}`);
  }
}

export function isHttpUrl(text: string): boolean {
  try {
    const url = new URL(text);
    return url.protocol === 'http:' || url.protocol === 'https:';
  } catch {
    return false;
  }
}

function isStandardSecret(secret: string): boolean {
  if (!secret.startsWith('whsec_')) return false;
  const rest = secret.slice(6);
  return rest.length > 0 && /^[A-Za-z0-9+/]+={0,2}$/.test(rest);
}

interface SendNames {
  events: string[];
  targets: string[];
  scenarios: readonly string[];
}

function checkSend(ctx: RuleContext, path: FieldPath, send: unknown, names: SendNames): void {
  if (!Array.isArray(send)) return;
  send.forEach((item: unknown, i) => {
    if (!isObject(item)) return;
    const at = [...path, i];
    for (const [field, known, what] of [
      ['event', names.events, 'webhooks.events'],
      ['to', names.targets, 'webhooks.targets'],
    ] as const) {
      const value = item[field];
      const fieldAt = [...at, field];
      if (typeof value !== 'string' || ctx.issues.has(fieldAt) || known.includes(value)) continue;
      const hint = suggestField(value, known);
      const list =
        known.length === 0
          ? `there is none under ${what}`
          : hint !== undefined
            ? `did you mean "${hint}"?`
            : `${what} has ${known.join(', ')}`;
      ctx.issues.report(fieldAt, `names no entry of ${what}: ${list}`);
    }
    if (item.after !== undefined) checkDelay(ctx, [...at, 'after'], item.after);
    if (typeof item.url === 'string') {
      checkText(ctx, [...at, 'url'], item.url, { scenarios: names.scenarios });
      if (!item.url.includes('${') && !isHttpUrl(item.url) && !ctx.issues.has([...at, 'url']))
        ctx.issues.report([...at, 'url'], `must be an http:// or https:// URL, got ${describeValue(item.url)}`);
    }
    checkData(ctx, [...at, 'data'], item.data, names.scenarios);
  });
}

/** Visits every leaf answer of an endpoint with its path. */
function eachLeaf(base: FieldPath, node: Obj, visit: (path: FieldPath, leaf: Obj) => void): void {
  const kind = ANSWER_KINDS.find((k) => Array.isArray(node[k]));
  if (kind === undefined) return visit(base, node);
  (node[kind] as unknown[]).forEach((item, i) => {
    if (isObject(item)) eachLeaf([...base, kind, i], item, visit);
  });
}

/** Reports the webhook problems of `data` (already checked against the schema). */
export function checkWebhooks(ctx: RuleContext, data: Obj): void {
  const section = isObject(data.webhooks) ? data.webhooks : {};
  const targets = isObject(section.targets) ? section.targets : {};
  const events = isObject(section.events) ? section.events : {};
  const scenarios = isObject(data.scenarios) ? Object.keys(data.scenarios) : [];
  for (const [name, target] of Object.entries(targets))
    if (isObject(target)) checkTarget(ctx, ['webhooks', 'targets', name], target);
  for (const [name, event] of Object.entries(events))
    if (isObject(event)) checkData(ctx, ['webhooks', 'events', name, 'data'], event.data, scenarios);
  if (!Array.isArray(data.endpoints)) return;
  const names = {
    events: [...Object.keys(events), ...(ctx.served?.events ?? [])],
    targets: [...Object.keys(targets), ...(ctx.served?.targets ?? [])],
    scenarios,
  };
  data.endpoints.forEach((endpoint: unknown, index) => {
    if (!isObject(endpoint)) return;
    const base: FieldPath = ['endpoints', index];
    if (isObject(endpoint.response)) checkSend(ctx, [...base, 'response', 'send'], endpoint.response.send, names);
    if (ANSWER_KINDS.some((k) => Array.isArray(endpoint[k])))
      eachLeaf(base, endpoint, (path, leaf) => checkSend(ctx, [...path, 'send'], leaf.send, names));
  });
}
