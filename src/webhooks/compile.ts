import { compileString, compileTemplate, type CompiledString, type CompiledTemplate } from '../expression/index.js';
import type { RequestContext } from '../expression/context.js';
import type { ExpressionOptions } from '../expression/compile.js';
import { createAnswerRandom } from '../seeded.js';
import type { DelayShape } from '../config/types.js';
import type { ChaosConfig, Envelope, SendConfig, WebhooksConfig } from '../config/types-webhooks.js';
import { fingerprint, standardKey, type ResolvedSign } from './sign.js';

/** A target ready to send to: its URL and secret resolved once per load. */
export interface CompiledTarget {
  readonly name: string;
  readonly url: string;
  readonly sign: ResolvedSign;
  readonly scheduleMs: readonly number[];
  readonly timeoutMs: number;
  readonly chaos: ChaosConfig;
  readonly disabled: boolean;
}

/** An event template ready to evaluate. */
export interface CompiledEvent {
  readonly type: string;
  readonly envelope: Envelope;
  readonly data?: CompiledTemplate;
}

/** The webhooks of one config load; `secrets` are registered with the redactor. */
export interface CompiledWebhooks {
  readonly targets: ReadonlyMap<string, CompiledTarget>;
  readonly events: ReadonlyMap<string, CompiledEvent>;
  readonly secrets: readonly string[];
}

/** One item of a leaf's `send`, compiled with the leaf. */
export interface CompiledSend {
  readonly event: string;
  readonly to: string;
  /** A URL in place of the target's; when it reads the request, it may reach loopback only. */
  readonly url?: CompiledString;
  readonly afterMs: number;
  readonly afterShape?: DelayShape;
  readonly data?: CompiledTemplate;
}

declare module '../answer/parts.js' {
  interface LeafParts {
    /** Webhook events sent once this answer is sent. */
    readonly send?: readonly CompiledSend[];
  }
  interface ConfigParts {
    /** `webhooks:` with URLs and secrets resolved, when configured. */
    webhooks?: CompiledWebhooks;
  }
}

/** A context with no request: what `${env.MOCKAPI_*}` in a URL or secret (and a triggered event) is evaluated with. */
export function emptyContext(now: number, seed = 0, n = 0): RequestContext {
  return {
    params: {},
    query: {},
    headers: {},
    cookies: {},
    body: undefined,
    request: n,
    state: {},
    now,
    random: createAnswerRandom(seed, 'webhook trigger', n),
  };
}

function text(value: string, env: ExpressionOptions['env']): string {
  if (!value.includes('${')) return value;
  const compiled = compileString(value, { env });
  if (!compiled.ok) throw new Error(`unvalidated webhook text: ${compiled.issue.message}`);
  const result = compiled.value.evaluate(emptyContext(Date.now()));
  return result === undefined || result === null ? '' : String(result);
}

function template(value: unknown, options: ExpressionOptions): CompiledTemplate | undefined {
  if (value === undefined) return undefined;
  const compiled = compileTemplate(value, { ...options, allowResponse: true });
  if (!compiled.ok) throw new Error(`unvalidated webhook data: ${compiled.issues[0]?.message ?? ''}`);
  return compiled.value;
}

/** Compiles `webhooks:` (validated) for a load: URLs and secrets read from the environment once. */
export function compileWebhooks(
  config: WebhooksConfig | undefined,
  options: ExpressionOptions,
): CompiledWebhooks | undefined {
  if (config === undefined) return undefined;
  const secrets: string[] = [];
  const targets = new Map<string, CompiledTarget>();
  for (const [name, target] of Object.entries(config.targets)) {
    const secret = text(target.sign.secret, options.env);
    if (secret !== '') {
      secrets.push(secret);
      if (target.sign.scheme === 'standard' && secret.startsWith('whsec_'))
        secrets.push(secret.slice(6), standardKey(secret).toString('hex'));
    }
    targets.set(name, {
      name,
      url: text(target.url, options.env),
      sign: { ...target.sign, secret },
      scheduleMs: target.scheduleMs,
      timeoutMs: target.timeoutMs,
      chaos: target.chaos,
      disabled: target.disabled,
    });
  }
  const events = new Map<string, CompiledEvent>();
  for (const [type, event] of Object.entries(config.events)) {
    const data = template(event.data, options);
    events.set(type, { type, envelope: event.envelope, ...(data === undefined ? {} : { data }) });
  }
  return { targets, events, secrets: secrets.filter((s) => s.length >= 4) };
}

/** Compiles a leaf's `send` (validated). */
export function compileSends(sends: readonly SendConfig[], options: ExpressionOptions): CompiledSend[] {
  return sends.map((send) => {
    let url: CompiledString | undefined;
    if (send.url !== undefined) {
      const compiled = compileString(send.url, options);
      if (!compiled.ok) throw new Error(`unvalidated send url: ${compiled.issue.message}`);
      url = compiled.value;
    }
    const data = template(send.data, options);
    return {
      event: send.event,
      to: send.to,
      afterMs: send.afterMs,
      ...(url === undefined ? {} : { url }),
      ...(send.afterShape === undefined ? {} : { afterShape: send.afterShape }),
      ...(data === undefined ? {} : { data }),
    };
  });
}

/** A secret as admin answers and logs show it. */
export const shownSecret = (secret: string): string => fingerprint(secret);
