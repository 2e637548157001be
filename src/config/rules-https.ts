import { resolve } from 'node:path';
import { readTlsPair } from '../tls-pair.js';
import type { RuleContext } from './rule-kit.js';

type Obj = Record<string, unknown>;

function isObject(v: unknown): v is Obj {
  return v !== null && typeof v === 'object' && !Array.isArray(v);
}

/**
 * `server.https`: `cert` and `key` come together, and name readable PEM files that belong
 * together (checked with node:crypto; the problem names both files).
 */
export function checkHttps(ctx: RuleContext, server: unknown): void {
  if (!isObject(server) || !isObject(server.https)) return;
  const https = server.https;
  const certPath = ['server', 'https', 'cert'];
  const keyPath = ['server', 'https', 'key'];
  const cert = typeof https.cert === 'string' && !ctx.issues.has(certPath) ? https.cert : undefined;
  const key = typeof https.key === 'string' && !ctx.issues.has(keyPath) ? https.key : undefined;
  if (cert !== undefined && https.key === undefined)
    return void ctx.issues.report(certPath, 'needs server.https.key, the private key of this certificate');
  if (key !== undefined && https.cert === undefined)
    return void ctx.issues.report(keyPath, 'needs server.https.cert, the certificate of this key');
  if (cert === undefined || key === undefined) return;
  const verdict = readTlsPair(resolve(ctx.dir, cert), resolve(ctx.dir, key));
  if (!verdict.ok) ctx.issues.report(verdict.field === 'key' ? keyPath : certPath, verdict.problem);
}
