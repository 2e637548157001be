import { createHash, createHmac } from 'node:crypto';
import type { SignConfig } from '../config/types-webhooks.js';
import { DELIVERY_MARK_HEADER } from '../control/admin-guard.js';

/** A target's signing, its secret resolved (from `${env.MOCKAPI_*}` or the literal). */
export interface ResolvedSign extends Omit<SignConfig, 'secret'> {
  readonly secret: string;
}

/** What one attempt signs: the bytes sent, the event id, the event type and the real time of the attempt. */
export interface SignInput {
  readonly body: Buffer;
  readonly id: string;
  readonly type: string;
  /** Seconds since the epoch, on the real clock (a receiver compares it with its own). */
  readonly timestamp: number;
  /** Chaos: sign with a wrong key, so the receiver's check fails. */
  readonly badSignature?: boolean;
}

/** `sha256:` and the first 12 hex digits of the secret's SHA-256: what logs and admin answers show instead of a secret. */
export function fingerprint(secret: string): string {
  return secret === '' ? '' : `sha256:${createHash('sha256').update(secret).digest('hex').slice(0, 12)}`;
}

/** The key bytes of a Standard Webhooks secret: the base64 after `whsec_`. */
export function standardKey(secret: string): Buffer {
  return Buffer.from(secret.startsWith('whsec_') ? secret.slice(6) : secret, 'base64');
}

const hmac = (algorithm: string, key: string | Buffer, parts: ReadonlyArray<string | Buffer>): Buffer => {
  const mac = createHmac(algorithm, key);
  for (const part of parts) mac.update(part);
  return mac.digest();
};

/** A key unlike the real one (the `badSignature` chaos): the secret with a byte changed. */
function wrongKey(key: string | Buffer): Buffer {
  const bytes = Buffer.from(key);
  const copy = Buffer.concat([bytes, Buffer.from('!')]);
  return copy;
}

/**
 * The headers that sign one attempt, as the real service writes them: the bytes signed are `body`,
 * the bytes sent. `stripe`: `Stripe-Signature: t=…,v1=<hex HMAC-SHA256 of "t.body">`; `standard`:
 * `webhook-id`, `webhook-timestamp`, `webhook-signature: v1,<base64>`; `github`:
 * `X-Hub-Signature-256: sha256=<hex>` with `X-GitHub-Event` and `X-GitHub-Delivery`; `hmac`: the
 * configured header over the configured template; `none`: none.
 */
export function signatureHeaders(sign: ResolvedSign, input: SignInput): Record<string, string> {
  const { body, id, timestamp } = input;
  const keyOf = (key: string | Buffer): string | Buffer => (input.badSignature === true ? wrongKey(key) : key);
  switch (sign.scheme) {
    case 'stripe': {
      const v1 = hmac('sha256', keyOf(sign.secret), [`${timestamp}.`, body]).toString('hex');
      return { 'stripe-signature': `t=${timestamp},v1=${v1}` };
    }
    case 'standard': {
      const v1 = hmac('sha256', keyOf(standardKey(sign.secret)), [`${id}.${timestamp}.`, body]).toString('base64');
      return { 'webhook-id': id, 'webhook-timestamp': String(timestamp), 'webhook-signature': `v1,${v1}` };
    }
    case 'github': {
      const hex = hmac('sha256', keyOf(sign.secret), [body]).toString('hex');
      return { 'x-hub-signature-256': `sha256=${hex}`, 'x-github-event': input.type, 'x-github-delivery': id };
    }
    case 'hmac': {
      const parts = sign.template.split(/(\$\{\s*(?:timestamp|id|body)\s*\})/).map((part) => {
        const name = /^\$\{\s*(timestamp|id|body)\s*\}$/.exec(part)?.[1];
        return name === 'body' ? body : name === 'id' ? id : name === 'timestamp' ? String(timestamp) : part;
      });
      const signature = hmac(sign.algorithm, keyOf(sign.secret), parts).toString(sign.encoding);
      return { [sign.header.toLowerCase()]: `${sign.prefix}${signature}` };
    }
    case 'none':
      return {};
  }
}

/**
 * The headers one attempt is sent with: the body's type, who sends it, the delivery mark (every
 * mockapi's admin API refuses a request that carries it, so a delivery can never call one) and
 * its signature.
 */
export function attemptHeaders(
  sign: ResolvedSign,
  body: Buffer,
  id: string,
  type: string,
  timestamp: number,
  badSignature: boolean,
): Record<string, string> {
  return {
    'content-type': 'application/json',
    'user-agent': 'mockapi-webhooks',
    [DELIVERY_MARK_HEADER]: '1',
    ...signatureHeaders(sign, { body, id, type, timestamp, badSignature }),
  };
}
