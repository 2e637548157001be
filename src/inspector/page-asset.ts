import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import type { ServerResponse } from 'node:http';

/** The path the inspector is served at. */
export const INSPECTOR_PATH = '/__mockapi/';

/** An answer ready to send: status, a flat header list (as `writeHead` takes it) and the body. */
export interface PageAnswer {
  status: number;
  headers: string[];
  body: Buffer;
}

/**
 * Where the built page may be: beside this module in dist/inspector/, next to the CLI bundle in
 * dist/cli/ (`../inspector/`), or, when this module runs from src/ (tests on the sources), in dist/.
 */
const CANDIDATES = ['./inspector.html', '../inspector/inspector.html', '../../dist/inspector/inspector.html'];

let cached: PageAnswer | undefined;

/**
 * The inspector page as an answer: read once (on the first visit, so `serve` starts no slower),
 * then kept. The page is built by `npm run build` (scripts/build-inspector.mjs); without it the
 * answer is a JSON 500 that says so.
 */
export function inspectorPage(): PageAnswer {
  if (cached !== undefined) return cached;
  const html = readPage();
  if (html === undefined) {
    const body = Buffer.from(
      JSON.stringify({ error: 'inspector_missing', message: 'The inspector page is not built: run npm run build' }),
    );
    return {
      status: 500,
      headers: ['content-type', 'application/json; charset=utf-8', 'content-length', String(body.length)],
      body,
    };
  }
  const body = Buffer.from(html);
  cached = { status: 200, headers: pageHeaders(html, body.length), body };
  return cached;
}

function readPage(): string | undefined {
  for (const candidate of CANDIDATES) {
    try {
      return readFileSync(new URL(candidate, import.meta.url), 'utf8');
    } catch {
      // The next place.
    }
  }
  return undefined;
}

/**
 * Headers that keep the page to itself: its CSP allows only its own two inline blocks (by hash)
 * and requests to its own origin, and no other site may frame it (so no one can trick a click on
 * Rotate key) or read it.
 */
function pageHeaders(html: string, length: number): string[] {
  const csp = [
    "default-src 'none'",
    `script-src ${inlineHash(html, 'script')}`,
    `style-src ${inlineHash(html, 'style')}`,
    "connect-src 'self'",
    'img-src data:',
    "base-uri 'none'",
    "form-action 'none'",
    "frame-ancestors 'none'",
  ].join('; ');
  return [
    'content-type',
    'text/html; charset=utf-8',
    'content-length',
    String(length),
    'cache-control',
    'no-cache',
    'content-security-policy',
    csp,
    'x-content-type-options',
    'nosniff',
    'x-frame-options',
    'DENY',
    'referrer-policy',
    'no-referrer',
    'cross-origin-opener-policy',
    'same-origin',
    'cross-origin-resource-policy',
    'same-origin',
  ];
}

/** `'sha256-…'` of the text of the page's one inline `<tag>` block. */
function inlineHash(html: string, tag: 'script' | 'style'): string {
  const start = html.indexOf(`<${tag}>`);
  const end = html.indexOf(`</${tag}>`, start);
  if (start === -1 || end === -1) return "'none'";
  const text = html.slice(start + tag.length + 2, end);
  return `'sha256-${createHash('sha256').update(text).digest('base64')}'`;
}

/** Writes the inspector page as the answer (the admin API's guard has already let the request in). */
export function sendInspectorPage(res: ServerResponse): void {
  const page = inspectorPage();
  res.writeHead(page.status, page.headers);
  res.end(page.body);
}
