import { statSync } from 'node:fs';
import { resolve } from 'node:path';
import { backtrackingRisk } from '../regex/regex-safety.js';
import { authValueProblem } from './auth-value.js';
import { findSecretShapes } from '../redact/secret-shapes.js';
import type { RuleContext } from './rule-kit.js';
import { durationProblem, parseDuration } from './units.js';
import { describeValue } from './issues.js';

type Obj = Record<string, unknown>;
const isObject = (v: unknown): v is Obj => v !== null && typeof v === 'object' && !Array.isArray(v);

/**
 * The rules of `upstream:` and `recording:` a schema cannot express: a parseable URL, an auth value
 * read from MOCKAPI_* environment variables only (never a literal credential), a CA file that
 * exists, a timeout above 0, redaction patterns that compile and cannot backtrack catastrophically.
 */
export function checkUpstream(ctx: RuleContext, data: Obj): void {
  const upstream = data.upstream;
  if (isObject(upstream)) {
    if (typeof upstream.url === 'string' && !ctx.issues.has(['upstream', 'url'])) {
      try {
        const url = new URL(upstream.url);
        if (url.username !== '' || url.password !== '')
          ctx.issues.report(
            ['upstream', 'url'],
            'must not carry a user or password: a literal credential would be committed with the config; use upstream.auth with ${env.MOCKAPI_*}',
          );
      } catch {
        ctx.issues.report(
          ['upstream', 'url'],
          `must be an http:// or https:// URL, got ${describeValue(upstream.url)}`,
        );
      }
    }
    const auth = upstream.auth;
    if (isObject(auth) && typeof auth.value === 'string' && !ctx.issues.has(['upstream', 'auth', 'value'])) {
      const problem = authValueProblem(auth.value);
      if (problem !== undefined) ctx.issues.report(['upstream', 'auth', 'value'], problem);
    }
    if (isObject(upstream.headers)) {
      for (const name of Object.keys(upstream.headers)) {
        const value = (upstream.headers as Obj)[name];
        if (/^(authorization|proxy-authorization|x-api-key|cookie)$/i.test(name))
          ctx.issues.report(
            ['upstream', 'headers', name],
            'is a credential header: set it with upstream.auth, whose value comes from the environment',
          );
        else if (typeof value === 'string' && findSecretShapes(value).length > 0)
          ctx.issues.report(
            ['upstream', 'headers', name],
            `holds ${findSecretShapes(value)[0]?.name}: a literal credential would be committed with the config; use upstream.auth with \${env.MOCKAPI_*}`,
          );
      }
    }
    if (typeof upstream.ca === 'string' && !ctx.issues.has(['upstream', 'ca'])) {
      const file = resolve(ctx.dir, upstream.ca);
      let ok = false;
      try {
        ok = statSync(file).isFile();
      } catch {
        ok = false;
      }
      if (!ok) ctx.issues.report(['upstream', 'ca'], `names a file that does not exist: ${file}`);
    }
    if (upstream.timeout !== undefined && !ctx.issues.has(['upstream', 'timeout'])) {
      const ms = parseDuration(upstream.timeout);
      if (ms === undefined)
        ctx.issues.report(
          ['upstream', 'timeout'],
          `${typeof upstream.timeout === 'string' ? durationProblem(upstream.timeout) : 'must be a duration'}, got ${describeValue(upstream.timeout)}`,
        );
      else if (ms === 0) ctx.issues.report(['upstream', 'timeout'], 'must be longer than 0');
    }
  }
  const recording = data.recording;
  if (isObject(recording) && isObject(recording.redact) && Array.isArray(recording.redact.patterns)) {
    for (const [i, pattern] of recording.redact.patterns.entries()) {
      if (typeof pattern !== 'string') continue;
      const path = ['recording', 'redact', 'patterns', i];
      try {
        new RegExp(pattern, 'g');
      } catch (err) {
        ctx.issues.report(path, `is not a valid regular expression: ${(err as Error).message}`);
        continue;
      }
      const risk = backtrackingRisk(pattern, 'g');
      if (risk !== undefined) ctx.issues.report(path, risk);
    }
  }
}
