import type { CompiledError } from '../answer/error-answers.js';
import type { AnswerBody } from '../answer/answer-body.js';
import { DEFAULT_KEY_NAME, METER_SCALE, type ErrorKind } from '../config/types.js';
import { windowText } from '../pipeline/meters.js';
import { DEFAULT_ACCEPT, findCredential } from '../pipeline/auth-accept.js';
import { maskKey } from '../redact/mask-key.js';
import type { Exchange } from './exchange.js';

/** What the handler knows of one of its own answers when `errors:` may reshape it. */
export interface OwnAnswer {
  readonly kind: ErrorKind;
  readonly status: number;
  /** The default answer's own headers (a 401's challenge), before limit and CORS headers. */
  readonly headers: readonly string[];
  readonly body: AnswerBody;
  /** Limit headers (Retry-After included) the answer carries whatever its shape. */
  readonly limits: readonly string[];
  /** The path after the base path (the whole path outside it). */
  readonly path: string;
  /** Whether the request passed auth (with `apiKey`, the key named `default`, or the key of `keys:` in `x.named`). */
  readonly authenticated: boolean;
  /** What the client may do about it (`error.hint`): a key found where the config reads none. */
  readonly hint?: string | undefined;
  /** A meter's refusal: the mock's sentence of what was asked of which meter (`error.meter.message`). */
  readonly meterMessage?: string | undefined;
}

/** The template that reshapes `kind` for this request: the endpoint's own simulated failure, else the config's. */
export function errorTemplate(x: Exchange, kind: ErrorKind): CompiledError | undefined {
  const errors = x.compiled.errors;
  if (errors === undefined) return undefined;
  if (kind === 'simulatedFailure' && x.endpoint !== undefined) {
    const own = errors.endpointFailures.get(x.endpoint.key);
    if (own !== undefined) return own;
  }
  return errors.kinds[kind];
}

function defaultMessage(body: AnswerBody): string {
  try {
    const parsed = JSON.parse(Buffer.isBuffer(body) ? body.toString('utf8') : String(body)) as {
      message?: unknown;
      error?: unknown;
    };
    return typeof parsed.message === 'string' ? parsed.message : typeof parsed.error === 'string' ? parsed.error : '';
  } catch {
    return '';
  }
}

function retryAfterOf(headers: readonly string[]): number | undefined {
  for (let i = 0; i < headers.length; i += 2) {
    if ((headers[i] as string).toLowerCase() === 'retry-after') return Number(headers[i + 1]);
  }
  return undefined;
}

/** What an `errors:` template reads of a meter's refusal as `error.meter`: its name, window, limit, what was used and asked (in its unit), and the mock's sentence. */
function meterFacts(x: Exchange, body: AnswerBody, sentence: string | undefined): { meter?: Record<string, unknown> } {
  const refused = x.verdict?.meter;
  if (refused === undefined) return {};
  const { meter } = refused;
  const window = meter.period === 'window' ? windowText(meter.windowMs) : meter.period;
  return {
    meter: {
      name: meter.name,
      window,
      limit: meter.limit / METER_SCALE,
      used: refused.used / METER_SCALE,
      requested: refused.requested / METER_SCALE,
      // The mock's sentence (the default bodies of a full window and a spent budget keep their
      // fixed words, OpenAI's insufficient_quota too): else the default body's message.
      message: sentence ?? defaultMessage(body),
    },
  };
}

/** The key the request sent, masked; undefined when it sent none. */
function maskedKeyOf(x: Exchange, authenticated: boolean): string | undefined {
  if (authenticated)
    return maskKey(
      x.named === undefined ? x.compiled.config.apiKey : (x.compiled.config.keys?.[x.named.index]?.key ?? ''),
    );
  const found = findCredential(x.compiled.accept ?? DEFAULT_ACCEPT, {
    headers: x.req.headers,
    url: x.req.url ?? '/',
    rawHeaders: x.req.rawHeaders,
  });
  return found?.candidate === undefined ? undefined : maskKey(found.candidate);
}

/** The reshaped answer: status, the whole header list (limit and CORS headers added) and body. */
export function renderOwnAnswer(
  x: Exchange,
  template: CompiledError,
  answer: OwnAnswer,
  now: number,
  state: Readonly<Record<string, string>>,
): { status: number; headers: string[]; body: Buffer } {
  const rendered = template.render(
    {
      status: answer.status,
      message: defaultMessage(answer.body),
      method: x.method,
      path: answer.path,
      retryAfter: retryAfterOf(answer.limits),
      keyName: answer.authenticated ? (x.named?.name ?? DEFAULT_KEY_NAME) : undefined,
      keyMasked: maskedKeyOf(x, answer.authenticated),
      ...meterFacts(x, answer.body, answer.meterMessage),
      hint: answer.hint,
    },
    { url: x.req.url ?? '/', headers: x.req.headers, body: x.body, now, state },
    answer.headers,
  );
  return { status: rendered.status, headers: rendered.headers.concat(answer.limits, x.extra), body: rendered.body };
}
