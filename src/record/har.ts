import { decodePath } from './decode-path.js';
import type { RecordedExchange } from './exchange.js';

type Obj = Record<string, unknown>;
const isObject = (v: unknown): v is Obj => v !== null && typeof v === 'object' && !Array.isArray(v);
const pairs = (v: unknown): Array<[string, string]> =>
  Array.isArray(v)
    ? v
        .filter(isObject)
        .filter((h) => typeof h.name === 'string' && typeof h.value === 'string')
        .map((h) => [(h.name as string).toLowerCase(), h.value as string])
    : [];

/** A HAR file's exchanges, as a recording would have captured them, and what was left out with why. */
export interface HarReading {
  exchanges: RecordedExchange[];
  skipped: string[];
}

/**
 * Reads a HAR 1.2 log (`mockapi record --from-har`). With `base` (the upstream URL), only entries
 * under it are kept and their path is taken after it; without, every entry's path is kept as is.
 * Response bodies are taken as the HAR stores them (decoded; base64 when `encoding` says so).
 * Upstream 401/403/429 answers are left out unless `keepRefusals`.
 */
export function readHar(text: string, base: string | undefined, keepRefusals: boolean): HarReading | { error: string } {
  let har: unknown;
  try {
    har = JSON.parse(text);
  } catch (err) {
    return { error: `it is not JSON: ${(err as Error).message}` };
  }
  const entries = isObject(har) && isObject(har.log) && Array.isArray(har.log.entries) ? har.log.entries : undefined;
  if (entries === undefined) return { error: 'it has no log.entries list; is it a HAR file?' };
  const prefix = base === undefined ? undefined : new URL(base);
  const exchanges: RecordedExchange[] = [];
  const skipped: string[] = [];
  let refused = 0;
  entries.forEach((entry, i) => {
    if (!isObject(entry) || !isObject(entry.request) || !isObject(entry.response))
      return void skipped.push(`entry ${i}: not a request and response`);
    const { request, response } = entry;
    let url: URL;
    try {
      url = new URL(String(request.url));
    } catch {
      return void skipped.push(`entry ${i}: its URL cannot be read`);
    }
    let path = url.pathname;
    if (prefix !== undefined) {
      const root = prefix.pathname.replace(/\/+$/, '');
      if (url.origin !== prefix.origin || (root !== '' && path !== root && !path.startsWith(`${root}/`)))
        return void skipped.push(`entry ${i}: ${url.origin}${url.pathname} is not under ${base}`);
      path = path.slice(root.length) || '/';
    }
    const status = Number(response.status);
    if (!Number.isInteger(status) || status < 100 || status > 599)
      return void skipped.push(`entry ${i}: status ${String(response.status)} (the request never got an answer)`);
    if ((status === 401 || status === 403 || status === 429) && !keepRefusals) return void refused++;
    const content = isObject(response.content) ? response.content : {};
    const bodyText = typeof content.text === 'string' ? content.text : '';
    const body = content.encoding === 'base64' ? Buffer.from(bodyText, 'base64') : Buffer.from(bodyText, 'utf8');
    const headers = pairs(response.headers);
    if (typeof content.mimeType === 'string' && content.mimeType !== '' && !headers.some(([n]) => n === 'content-type'))
      headers.push(['content-type', content.mimeType]);
    const postData =
      isObject(request.postData) && typeof request.postData.text === 'string'
        ? Buffer.from(request.postData.text, 'utf8')
        : undefined;
    exchanges.push({
      seq: exchanges.length,
      method: String(request.method).toUpperCase(),
      path: decodePath(path),
      query: Object.fromEntries(url.searchParams),
      requestHeaders: Object.fromEntries(
        pairs(request.headers).filter(([n]) => !/^(x-api-key|authorization|proxy-authorization|cookie)$/.test(n)),
      ),
      ...(postData === undefined ? {} : { requestBody: postData }),
      status,
      responseHeaders: headers,
      responseBody: body,
    });
  });
  if (refused > 0)
    skipped.push(
      `${refused} 401/403/429 answer${refused === 1 ? '' : 's'} (recording.recordRefusals: true keeps them)`,
    );
  return { exchanges, skipped };
}
