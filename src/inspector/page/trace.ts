import type { Entry, Usage } from './api.js';

/** A place a key may come from, as the journal and the project info name it. */
export interface KeyPlace {
  via: string;
  name?: string;
}

const VIA: Record<string, string> = {
  'x-api-key': 'the X-API-Key header',
  bearer: 'an Authorization: Bearer header',
  basic: 'an Authorization: Basic header',
};

/** Where a key was read or looked for, in words: `the query parameter api_key`, `the X-Api-Key header`… */
export function placeOf(place: KeyPlace): string {
  const known = VIA[place.via];
  if (known !== undefined || place.name === undefined) return known ?? place.via;
  switch (place.via) {
    case 'header':
      return `the ${place.name} header`;
    case 'query':
      return `the query parameter ${place.name}`;
    case 'scheme':
      return `an Authorization: ${place.name} header`;
    case 'cookie':
      return `the cookie ${place.name}`;
    default:
      return `${place.via} ${place.name}`;
  }
}

/** The places of `auth.accept` as one phrase: `a, b or c`. */
function placesOf(accept: readonly KeyPlace[]): string {
  const words = accept.map(placeOf);
  return words.length <= 1 ? (words[0] ?? 'no place') : `${words.slice(0, -1).join(', ')} or ${words.at(-1)}`;
}

/** True for the default list (X-API-Key, Bearer, Basic in that order): the seed's sentence then. */
function isDefault(accept: readonly KeyPlace[] | undefined): boolean {
  return (
    accept === undefined ||
    (accept.length === 3 &&
      accept.every((p, i) => p.name === undefined && p.via === ['x-api-key', 'bearer', 'basic'][i]))
  );
}

/**
 * Why a request got its answer, as sentences, from what the journal recorded: its step, credential,
 * endpoint, answer and notes. Nothing is recomputed here — the notes are the server's own words, shown
 * as they are; `usage` only adds the limits' configured size and reset date to a 429, and `accept`
 * (the places `auth.accept` reads a key from, in order) says where a missing key was looked for.
 * Never the key itself: the journal's credential holds where it came from, not what it was.
 */
export function traceOf(entry: Entry, usage: Usage | undefined, accept?: readonly KeyPlace[]): string[] {
  const lines: string[] = [];
  const cred = entry.credential;
  const via = placeOf(cred);
  switch (entry.step) {
    case 'preflight':
      lines.push('CORS preflight: answered 204 without a key, and not counted.');
      break;
    case 'bad_request':
      lines.push(`The request could not be read: answered ${entry.status} before any step ran.`);
      break;
    case 'auth':
      if (cred.via === 'none') {
        lines.push(
          isDefault(accept)
            ? 'Auth: no credential — no X-API-Key, Bearer or Basic header with a value → 401 "No API key provided".'
            : `Auth: no credential — no key in ${placesOf(accept ?? [])} → ${entry.status}.`,
        );
      } else if (cred.key === 'previous')
        lines.push(`Auth: the key sent in ${via} is the key before the last rotation → 401 "Invalid API key".`);
      else lines.push(`Auth: the key sent in ${via} is not the current key → 401 "Invalid API key".`);
      break;
    default:
      lines.push(`Auth: the current key${cred.keyName === undefined ? '' : ` named ${cred.keyName}`}, sent in ${via}.`);
  }
  // A key of `keys:` has limits of its own: its figures, not the default key's.
  const own = cred.keyName === undefined ? usage : usage?.keys?.[cred.keyName];
  const meterNote = entry.notes.find(
    (n) => n.startsWith('rate limited: ') || n.startsWith('can never fit: ') || / spent: /.test(n),
  );
  if (meterNote !== undefined && (entry.step === 'rate_limit' || entry.step === 'quota')) {
    lines.push(
      entry.step === 'quota'
        ? `A budget is spent → ${entry.status}: waiting does not bring it back (it must be raised or reset); a client must not retry.`
        : meterNote.startsWith('can never fit')
          ? `The request asks more than a meter's whole limit → ${entry.status} with Retry-After: 0: it can never fit; a client must ask for less.`
          : `A meter's window is full → ${entry.status}; the request fits again after Retry-After.`,
    );
    if (entry.notes.some((n) => n.includes('futile retry (')))
      lines.push('Futile retry: this client sent again a request that a spent budget had refused.');
  } else if (entry.step === 'rate_limit') {
    const rate = own?.rateLimit;
    lines.push(
      rate
        ? `Rate limit full: all ${rate.limit} slots of the rolling window were taken → 429, not counted.`
        : 'Rate limit full → 429, not counted.',
    );
  } else if (entry.step === 'quota') {
    lines.push(
      own?.quota != null
        ? `Monthly quota used up: ${own.quota} requests already counted this month → 429 until ${nextMonth(own.month)}.`
        : 'Monthly quota used up → 429.',
    );
  } else if (admitted(entry.step)) {
    lines.push('Rate limit and quota: admitted, and counted towards this month.');
    if (entry.step === 'match') lines.push(`Match: no endpoint for ${entry.method} ${entry.path} → 404.`);
    else if (entry.endpoint !== null) lines.push(`Match: ${entry.endpoint}.`);
    lines.push(...validationLines(entry));
    if (entry.step === 'failure')
      lines.push(
        `Fail rate: this request drew the simulated failure → ${entry.status} ${sentWords(entry) ?? '"Random failure triggered"'}.`,
      );
    else if (entry.step === 'fault') lines.push('Fault: a configured fault was injected instead of the answer.');
    else if (entry.step === 'upstream')
      lines.push(
        `Upstream: sent to the real API, with the upstream credential in place of the mock key → ${entry.status}.`,
      );
    else if (entry.step === 'response')
      lines.push(
        entry.response !== null ? `Answer: ${entry.response} → ${entry.status}.` : `Answered ${entry.status}.`,
      );
  }
  for (const note of entry.notes) if (!note.startsWith(NOT_VALIDATED)) lines.push(`Server note: ${note}.`);
  return lines;
}

/**
 * What an answer said, as it was sent (an `errors:` template's words, not the default's): its
 * `message`, or `error.message` (the shape of many APIs), quoted; else its body's first 200
 * characters. Undefined when the entry holds no answer body (a server that does not journal it).
 */
export function sentWords(entry: Pick<Entry, 'responseBody'>): string | undefined {
  const body = entry.responseBody;
  if (body === undefined) return undefined;
  if (body === '') return 'with an empty body';
  let parsed: unknown;
  try {
    parsed = JSON.parse(body);
  } catch {
    parsed = undefined;
  }
  const message = messageOf(parsed) ?? messageOf((parsed as { error?: unknown } | undefined)?.error);
  if (message !== undefined) return JSON.stringify(message);
  return body.length > 200 ? `${body.slice(0, 200)}…` : body;
}

function messageOf(value: unknown): string | undefined {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return undefined;
  const message = (value as { message?: unknown }).message;
  return typeof message === 'string' ? message : undefined;
}

/** The validate step's note for what it did not check (parts of the operation, or the whole request). */
const NOT_VALIDATED = 'not validated: ';

function admitted(step: string): boolean {
  return (
    step === 'match' ||
    step === 'validation' ||
    step === 'failure' ||
    step === 'fault' ||
    step === 'response' ||
    step === 'upstream'
  );
}

/** The OpenAPI validation of a request: nothing when its endpoint does not validate requests. */
function validationLines(entry: Entry): string[] {
  const violations = entry.violations;
  // What the server could not check, in its own words: parts of the operation, or the whole request.
  const skipped = entry.notes
    .filter((note) => note.startsWith(NOT_VALIDATED))
    .map((note) => `OpenAPI validation: not checked: ${note.slice(NOT_VALIDATED.length)}.`);
  if (violations === undefined) return skipped;
  if (violations.length === 0)
    return [
      skipped.length === 0
        ? 'OpenAPI validation: the request follows the description.'
        : 'OpenAPI validation: the parts checked follow the description.',
      ...skipped,
    ];
  const outcome =
    entry.step === 'validation' ? `enforced → ${entry.status}` : 'reported (X-Mockapi-Violations), answered as usual';
  return [
    `OpenAPI validation: ${violations.length} violation${violations.length === 1 ? '' : 's'}, ${outcome}:`,
    ...violations.map((v) => `  ${v.in} ${v.pointer === '' ? '/' : v.pointer} (${v.keyword}): ${v.message}`),
    ...skipped,
  ];
}

/** One short label for a step, for the list and the step filter. */
export const STEP_LABELS: Record<string, string> = {
  auth: 'auth',
  rate_limit: 'rate limit',
  quota: 'quota',
  match: 'no match',
  validation: 'violated the description',
  failure: 'simulated failure',
  fault: 'fault',
  response: 'answered',
  preflight: 'preflight',
  bad_request: 'bad request',
  upstream: 'upstream',
};

/** The first day of the month after `month` ("2026-11"), as the page shows a reset date. */
export function nextMonth(month: string, short = false): string {
  const [y, m] = month.split('-').map(Number);
  if (y === undefined || m === undefined || Number.isNaN(y) || Number.isNaN(m)) return 'next month';
  const date = new Date(Date.UTC(m === 12 ? y + 1 : y, m === 12 ? 0 : m, 1));
  const day = date.toLocaleDateString(undefined, {
    day: 'numeric',
    month: 'short',
    year: short ? undefined : 'numeric',
    timeZone: 'UTC',
  });
  return short ? `${day} (UTC)` : `${day}, 00:00 UTC`;
}
