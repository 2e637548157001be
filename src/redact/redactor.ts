/**
 * The one redactor: every secret the server knows (the keys served now and those rotations replaced) is
 * registered here, and the request log, the journal (and with it the inspector, its cURL export and
 * the admin answers) scrub what a client sent through it. A secret is found in every form a
 * request carries text in: as is, percent-encoded (a path, a query, a form body, any hex case, any
 * characters encoded), `\u`-escaped in JSON, and base64-encoded (Basic credentials in any header).
 */

/** How many secrets a rotated redactor keeps at most: the keys served now and the newest of those replaced. */
export const MAX_KNOWN = 64;

/** What a secret is replaced with. */
export const REDACTED = '<redacted>';

/** Header names whose values are always hidden, whatever they hold: the places a credential travels by default. */
export const SECRET_HEADERS: readonly string[] = ['x-api-key', 'authorization', 'cookie', 'proxy-authorization'];

/**
 * Where keys travel besides their values: header names (any case) and query parameter names whose
 * values are hidden whatever they hold — a wrong key too. `auth.accept` registers its places here.
 */
export interface SecretPlaces {
  readonly headers?: readonly string[];
  readonly query?: readonly string[];
}

/** Scrubs the secrets it was made with out of text. Cheap when the text holds none of them. */
export interface Redactor {
  /** `text` with every secret, in each of its forms, replaced by `<redacted>`. */
  scrub(text: string): string;
  /** Whether a header's value is hidden whatever it holds (`name` in lower case). */
  isSecretHeader(name: string): boolean;
  /** Whether a query parameter's value is hidden whatever it holds. */
  isSecretQuery(name: string): boolean;
  /**
   * The redactor after a key change to `key` (and `others`, the keys of `keys:`): these and every
   * key served until now — a key a rotation replaced is still a secret, however many rotations ago
   * (the newest {@link MAX_KNOWN} are kept). Itself when no key changed.
   */
  rotated(key: string, others?: readonly string[]): Redactor;
  /** The redactor with these places hidden too (and only these beside the default headers). Itself when they are the same. */
  withPlaces(places: SecretPlaces): Redactor;
}

const DEFAULT_HEADER_SET: ReadonlySet<string> = new Set(SECRET_HEADERS);
const NO_QUERY: ReadonlySet<string> = new Set();

/** The places' lookup sets; the default ones are shared. */
function placeSets(places: SecretPlaces | undefined): { headers: ReadonlySet<string>; query: ReadonlySet<string> } {
  const extraHeaders = (places?.headers ?? []).map((h) => h.toLowerCase()).filter((h) => !DEFAULT_HEADER_SET.has(h));
  const query = places?.query ?? [];
  return {
    headers: extraHeaders.length === 0 ? DEFAULT_HEADER_SET : new Set([...SECRET_HEADERS, ...extraHeaders]),
    query: query.length === 0 ? NO_QUERY : new Set(query),
  };
}

function samePlaces(
  a: { headers: ReadonlySet<string>; query: ReadonlySet<string> },
  b: { headers: ReadonlySet<string>; query: ReadonlySet<string> },
): boolean {
  const same = (x: ReadonlySet<string>, y: ReadonlySet<string>): boolean =>
    x.size === y.size && [...x].every((v) => y.has(v));
  return same(a.headers, b.headers) && same(a.query, b.query);
}

/** Base64 needles are only made for secrets this long: a shorter one's would match ordinary text. */
const MIN_BASE64_SECRET = 6;
/** Characters of a base64 (standard or URL-safe) token, `/` aside: a token is widened over these. */
const BASE64_CHAR = /[A-Za-z0-9+_-]/;
const JSON_ESCAPES: Record<string, string> = {
  '"': '"',
  '\\': '\\',
  '/': '/',
  b: '\b',
  f: '\f',
  n: '\n',
  r: '\r',
  t: '\t',
};

const escapeRegExp = (text: string): string => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
const alternationOf = (needles: readonly string[]): string =>
  [...needles]
    .sort((a, b) => b.length - a.length)
    .map(escapeRegExp)
    .join('|');
const alternation = (needles: readonly string[]): RegExp | undefined =>
  needles.length === 0 ? undefined : new RegExp(alternationOf(needles), 'g');

/**
 * The parts of `secret`'s base64 encoding that do not depend on what surrounds it: one for each of
 * the three byte alignments it may have inside a longer encoded text (`user:key`, `:key`, `key:`),
 * in the standard and the URL-safe alphabet.
 */
function base64Cores(secret: string): string[] {
  if (secret.length < MIN_BASE64_SECRET) return [];
  const bytes = Buffer.from(secret, 'utf8');
  const cores = new Set<string>();
  for (let pad = 0; pad < 3; pad++) {
    const encoded = Buffer.concat([Buffer.alloc(pad), bytes]).toString('base64');
    const core = encoded.slice(Math.ceil((8 * pad) / 6), Math.floor((8 * (pad + bytes.length)) / 6));
    cores.add(core);
    cores.add(core.replace(/\+/g, '-').replace(/\//g, '_'));
  }
  return [...cores];
}

/** The value of the hex digit `code` (a char code), or -1. */
function hexValue(code: number): number {
  if (code >= 48 && code <= 57) return code - 48;
  const lower = code | 32;
  return lower >= 97 && lower <= 102 ? lower - 87 : -1;
}

/** The number written by the `digits` hex digits at `at` in `text`, or -1. */
function hexAt(text: string, at: number, digits: number): number {
  if (at + digits > text.length) return -1;
  let value = 0;
  for (let i = at; i < at + digits; i++) {
    const digit = hexValue(text.charCodeAt(i));
    if (digit === -1) return -1;
    value = value * 16 + digit;
  }
  return value;
}

/**
 * `text` with `%XX` and JSON escapes (`\uXXXX`, `\"`, `\/`, …) decoded, and where in `text` each
 * decoded character starts (`starts[decoded.length]` is `text.length`). A `%XX` gives one
 * character per byte: secrets are ASCII, which is all that must be found.
 */
function decodeWithMap(text: string): { decoded: string; starts: number[] } {
  let decoded = '';
  const starts: number[] = [];
  let i = 0;
  while (i < text.length) {
    starts.push(i);
    const code = text.charCodeAt(i);
    let value: number;
    if (code === 37 /* % */ && (value = hexAt(text, i + 1, 2)) !== -1) {
      decoded += String.fromCharCode(value);
      i += 3;
    } else if (code === 92 /* \ */ && text[i + 1] === 'u' && (value = hexAt(text, i + 2, 4)) !== -1) {
      decoded += String.fromCharCode(value);
      i += 6;
    } else if (code === 92 && JSON_ESCAPES[text[i + 1] as string] !== undefined) {
      decoded += JSON_ESCAPES[text[i + 1] as string] as string;
      i += 2;
    } else {
      decoded += text[i] as string;
      i += 1;
    }
  }
  starts.push(text.length);
  return { decoded, starts };
}

/** `text` with the spans `[start, end)` (sorted by start, possibly overlapping) replaced by `<redacted>`. */
function replaceSpans(text: string, spans: Array<[number, number]>): string {
  if (spans.length === 0) return text;
  let out = '';
  let at = 0;
  for (const [start, end] of spans) {
    if (end <= at) continue;
    if (start >= at) out += `${text.slice(at, start)}${REDACTED}`;
    at = end;
  }
  return out + text.slice(at);
}

/** A redactor with no secrets: changes nothing (an entry whose view came built, a blank pooled entry). */
export const NO_REDACTOR: Redactor = {
  scrub: (text) => text,
  isSecretHeader: (name) => DEFAULT_HEADER_SET.has(name),
  isSecretQuery: () => false,
  rotated: (key, others = []) => createRedactor([key, ...others]),
  withPlaces: (places) => createRedactor([], places),
};

/**
 * A redactor for `secrets` (empty ones are ignored). Every needle is made here, once: scrubbing a
 * text that holds no secret, no base64 form of one and no escape costs one regular-expression test.
 * `places`: headers and query parameters hidden whatever they hold (`auth.accept`'s). `current`
 * (default: `secrets`) are the keys served now, the ones a rotation keeps as previous.
 */
export function createRedactor(
  secrets: readonly string[],
  places?: SecretPlaces,
  current: readonly string[] = secrets,
): Redactor {
  const list = [...new Set(secrets.filter((s) => s !== ''))];
  const sets = placeSets(places);
  const placeFields = {
    isSecretHeader: (name: string) => sets.headers.has(name),
    isSecretQuery: (name: string) => sets.query.has(name),
  };
  if (list.length === 0) {
    if (places === undefined) return NO_REDACTOR;
    const none: Redactor = {
      ...NO_REDACTOR,
      ...placeFields,
      rotated: (key, others = []) => createRedactor([key, ...others], places),
      withPlaces: (next) => (samePlaces(placeSets(next), sets) ? none : createRedactor([], next)),
    };
    return none;
  }
  const raw = alternation(list) as RegExp;
  const cores = list.flatMap(base64Cores);
  const base64 = alternation(cores);
  /** Whether a text may need scrubbing: it holds an escape, a secret or a base64 form of one. */
  const suspect = new RegExp(`[%\\\\]|${alternationOf([...list, ...cores])}`);

  /** Secrets written with escapes (and as is): found in the decoded text, replaced in the original. */
  function scrubDecoded(text: string): string {
    const { decoded, starts } = decodeWithMap(text);
    const spans: Array<[number, number]> = [];
    for (const secret of list) {
      for (let at = decoded.indexOf(secret); at !== -1; at = decoded.indexOf(secret, at + 1)) {
        spans.push([starts[at] as number, starts[at + secret.length] as number]);
      }
    }
    return replaceSpans(
      text,
      spans.sort((a, b) => a[0] - b[0]),
    );
  }

  /** Base64 tokens holding a secret, widened to the whole token (its `=` padding included). */
  function scrubBase64(text: string, needles: RegExp): string {
    const spans: Array<[number, number]> = [];
    needles.lastIndex = 0;
    for (let m = needles.exec(text); m !== null; m = needles.exec(text)) {
      let start = m.index;
      let end = m.index + m[0].length;
      while (start > 0 && BASE64_CHAR.test(text[start - 1] as string)) start--;
      while (end < text.length && (BASE64_CHAR.test(text[end] as string) || text[end] === '=')) end++;
      spans.push([start, end]);
    }
    return replaceSpans(text, spans);
  }

  const redactor: Redactor = {
    ...placeFields,
    scrub(text) {
      if (!suspect.test(text)) return text;
      let out = text;
      if (out.includes('%') || out.includes('\\')) out = scrubDecoded(out);
      else {
        raw.lastIndex = 0;
        if (raw.test(out)) out = out.replace(raw, REDACTED);
      }
      if (base64 !== undefined) {
        base64.lastIndex = 0;
        if (base64.test(out)) out = scrubBase64(out, base64);
      }
      return out;
    },
    rotated(key, others = []) {
      const next = [key, ...others];
      if (next.length === current.length && next.every((k, i) => k === current[i])) return redactor;
      // Every key this server served stays a secret after it is replaced (the newest MAX_KNOWN of them).
      return createRedactor([...new Set([...next, ...list])].slice(0, Math.max(MAX_KNOWN, next.length)), places, next);
    },
    withPlaces(next) {
      return samePlaces(placeSets(next), sets) ? redactor : createRedactor(list, next, current);
    },
  };
  return redactor;
}
