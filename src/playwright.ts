/**
 * `mockapi-cli/playwright`: a mock session per Playwright test, on one mock server for the run.
 *
 * ```ts
 * import { test, expect } from 'mockapi-cli/playwright';
 * test('shows the order', async ({ page, mock }) => {
 *   await mock.stub({ method: 'GET', path: '/orders/:id', response: { body: { id: 1, status: 'paid' } } });
 *   await page.goto('/orders/1'); // the page's requests carry `baggage: mockapi.session=<id>`
 *   await expect(page.getByText('paid')).toBeVisible();
 * });
 * ```
 *
 * The server is started once (`webServer` of playwright.config, or a global setup) and named by the
 * `mockapiUrl` option (`use: { mockapiUrl: 'http://127.0.0.1:4010' }`) or `$MOCKAPI_URL`.
 */
import { test as base, type BrowserContext, type Route } from '@playwright/test';
import { closeMockSession, openMockSession, type MockSession } from './testing/use-mock-session.js';

export { expect } from '@playwright/test';
export type { MockSession } from './testing/use-mock-session.js';

/** The options of the `mock` fixture (`use: { … }` in playwright.config, or `test.use({ … })`). */
export interface MockOptions {
  /** The mock server's base URL. Default: `$MOCKAPI_URL`. */
  mockapiUrl: string | undefined;
  /**
   * Where the page's requests get the session's `baggage` entry besides the mock server itself: by
   * default the test's `baseURL` (the app, which may pass the entry on to the mock as OpenTelemetry
   * context does). Origins (`http://localhost:3000`); other origins are left untouched, so a
   * third-party API that does not allow the header never sees it.
   */
  mockapiBaggageOrigins: string[] | undefined;
}

/** The `mock` fixture: the test's session (stubs, waits, clock, reset act on it; `url` and `headers` name it). */
export interface MockFixtures {
  mock: MockSession;
}

/** `mockapi.session=<id>` added to a request's own baggage (kept as it was when it names a session already). */
function withBaggage(sent: string | undefined, entry: string): string {
  if (sent === undefined || sent.trim() === '') return entry;
  return /(^|,)\s*mockapi\.session\s*=/.test(sent) ? sent : `${sent},${entry}`;
}

function originOf(url: string | undefined): string | undefined {
  if (url === undefined) return undefined;
  try {
    return new URL(url).origin;
  } catch {
    return undefined;
  }
}

/**
 * Adds the session's baggage entry to the page's requests to `origins`, through a context route: a
 * cross-origin `fetch` from the page to the mock then works as it does without it (the browser never
 * sees the header, so it asks no preflight about it), and routes of the test's own, added later,
 * still run first (this one only falls back).
 */
async function carryBaggage(context: BrowserContext, origins: ReadonlySet<string>, entry: string): Promise<void> {
  await context.route(
    (url) => origins.has(url.origin),
    (route: Route) =>
      route.fallback({
        headers: { ...route.request().headers(), baggage: withBaggage(route.request().headers().baggage, entry) },
      }),
  );
}

/** Playwright's `test`, with a `mock` fixture per test. */
export const test = base.extend<MockOptions & MockFixtures>({
  mockapiUrl: [undefined, { option: true }],
  mockapiBaggageOrigins: [undefined, { option: true }],
  mock: async ({ mockapiUrl, mockapiBaggageOrigins, context, baseURL }, use) => {
    const session = await openMockSession({ session: true, ...(mockapiUrl === undefined ? {} : { url: mockapiUrl }) });
    const origins = new Set(
      [originOf(session.serverUrl), ...(mockapiBaggageOrigins ?? [originOf(baseURL)]).map(originOf)].filter(
        (o) => o !== undefined,
      ),
    );
    await carryBaggage(context, origins, session.baggage!);
    try {
      await use(session);
    } finally {
      await closeMockSession(session);
    }
  },
});
