// The look-alike examples judged by the services' own official SDKs (stripe, openai, @octokit/rest):
// each SDK is pointed at the mock and must parse a success, raise its own authentication error with
// the configured message, raise its rate-limit error (or retry as its source does, waiting as
// Retry-After says: the journal shows it) and its server error (its retries show in the journal).
import { afterAll, describe, expect, test } from 'vitest';
import Stripe from 'stripe';
import OpenAI from 'openai';
import { Octokit } from '@octokit/rest';
import type { ServeProcess } from '../helpers/cli.js';
import { gapMs, HOUR_LIMIT, journal, serveExample, stopExamples, TIGHT_LIMIT } from '../helpers/lookalike.js';

afterAll(stopExamples);

describe('payments look-alike, with the official stripe SDK', () => {
  const client = (proc: ServeProcess, key: string, maxNetworkRetries = 0) =>
    new Stripe(key, { host: '127.0.0.1', port: Number(new URL(proc.url).port), protocol: 'http', maxNetworkRetries });

  test('a call succeeds and parses', async () => {
    const proc = await serveExample('payments');
    const customer = await client(proc, proc.key).customers.retrieve('cus_NffrFeUfNV2Hib');
    expect(customer).toMatchObject({ id: 'cus_NffrFeUfNV2Hib', object: 'customer', email: 'jenny.rosen@example.com' });
    const charges = await client(proc, proc.key).charges.list();
    expect(charges.data[0]).toMatchObject({ object: 'charge', amount: 1099 });
  });

  test('a bad key raises StripeAuthenticationError with the configured message', async () => {
    const proc = await serveExample('payments');
    const error = await client(proc, 'sk_test_wrongKey000000004242')
      .customers.retrieve('cus_1')
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(Stripe.errors.StripeAuthenticationError);
    expect((error as Error).message).toBe('Invalid API Key provided: …4242');
  });

  test('a 429 raises StripeRateLimitError; stripe does not retry a 429 (it retries 409 and 5xx only)', async () => {
    const proc = await serveExample('payments', [HOUR_LIMIT]);
    const stripe = client(proc, proc.key, 2);
    await stripe.customers.retrieve('cus_NffrFeUfNV2Hib');
    const error = await stripe.customers.retrieve('cus_NffrFeUfNV2Hib').catch((e: unknown) => e);
    expect(error).toBeInstanceOf(Stripe.errors.StripeRateLimitError);
    expect((error as Stripe.errors.StripeError).code).toBe('rate_limit');
    const retryAfter = (error as Stripe.errors.StripeError).headers?.['retry-after'];
    expect(Number(retryAfter)).toBeGreaterThan(3500);
    expect((error as Error).message).toBe(`Request rate limit exceeded. Retry in ${retryAfter} s.`);
    const entries = await journal(proc, 2);
    expect(entries.map((e) => e.status)).toEqual([200, 429]);
  });

  test('a simulated 500 raises StripeAPIError after its retry, both in the journal', async () => {
    const proc = await serveExample('payments', [[['endpoints', 0, 'failRate'], 1]]);
    const error = await client(proc, proc.key, 1)
      .charges.list()
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(Stripe.errors.StripeAPIError);
    expect((error as Error).message).toBe('An unknown error occurred');
    const entries = await journal(proc, 2);
    expect(entries.map((e) => [e.path, e.status, e.step])).toEqual([
      ['/v1/charges', 500, 'failure'],
      ['/v1/charges', 500, 'failure'],
    ]);
  });
});

describe('payments look-alike: a request that breaks its description', () => {
  test('raises StripeInvalidRequestError with the first problem and its param; a valid one passes', async () => {
    const proc = await serveExample('payments');
    const stripe = new Stripe(proc.key, {
      host: '127.0.0.1',
      port: Number(new URL(proc.url).port),
      protocol: 'http',
      maxNetworkRetries: 0,
    });
    const error = await stripe.charges.list({ limit: 1000 }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(Stripe.errors.StripeInvalidRequestError);
    expect((error as Stripe.errors.StripeError).message).toBe('query parameter limit must be <= 100');
    expect((error as Stripe.errors.StripeError).param).toBe('limit');
    expect((await stripe.charges.list({ limit: 3 })).data).toHaveLength(1);
    expect((await journal(proc, 2)).map((e) => [e.status, e.step])).toEqual([
      [400, 'validation'],
      [200, 'response'],
    ]);
  });
});

describe('AI look-alike, with the official openai SDK', () => {
  const client = (proc: ServeProcess, apiKey: string, maxRetries = 0) =>
    new OpenAI({ apiKey, baseURL: `${proc.url}/v1`, maxRetries });

  test('calls succeed and parse', async () => {
    const proc = await serveExample('ai');
    const openai = client(proc, proc.key);
    const models = await openai.models.list();
    expect(models.data.map((m) => m.id)).toEqual(['gpt-4o-mini', 'text-embedding-3-small']);
    const completion = await openai.chat.completions.create({
      model: 'gpt-4o-mini',
      messages: [{ role: 'user', content: 'Hi' }],
    });
    expect(completion.model).toBe('gpt-4o-mini');
    expect(completion.choices[0]?.message.content).toBe('Hello from the mock.');
  });

  test('a bad key raises AuthenticationError with the configured message', async () => {
    const proc = await serveExample('ai');
    const error = await client(proc, 'sk-proj-wrong0000000000009999')
      .models.list()
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(OpenAI.AuthenticationError);
    expect((error as InstanceType<typeof OpenAI.AuthenticationError>).code).toBe('invalid_api_key');
    expect((error as Error).message).toBe(
      '401 Incorrect API key provided: …9999. You can find your API key at https://platform.openai.com/account/api-keys.',
    );
  });

  test('a 429 raises RateLimitError when retries are off', async () => {
    const proc = await serveExample('ai', [HOUR_LIMIT]);
    const openai = client(proc, proc.key);
    await openai.models.list();
    const error = await openai.models.list().catch((e: unknown) => e);
    expect(error).toBeInstanceOf(OpenAI.RateLimitError);
    const retryAfter = (error as InstanceType<typeof OpenAI.RateLimitError>).headers.get('retry-after');
    expect(Number(retryAfter)).toBeGreaterThan(3500);
    expect((error as Error).message).toBe(`429 Rate limit reached for requests. Please try again in ${retryAfter}s.`);
  });

  test('openai retries a 429 after Retry-After: the journal shows the retry no earlier than told', async () => {
    const proc = await serveExample('ai', [TIGHT_LIMIT]);
    const openai = client(proc, proc.key, 2);
    await openai.models.list();
    const models = await openai.models.list();
    expect(models.data).toHaveLength(2);
    const entries = await journal(proc, 3);
    expect(entries.map((e) => e.status)).toEqual([200, 429, 200]);
    expect(gapMs(entries[1]!, entries[2]!)).toBeGreaterThanOrEqual(1000); // Retry-After: 1
    expect(entries[2]!.notes.filter((n) => n.startsWith('early retry'))).toEqual([]);
  });

  test('a simulated 500 raises InternalServerError after its retries, all in the journal', async () => {
    const proc = await serveExample('ai', [[['endpoints', 0, 'failRate'], 1]]);
    const error = await client(proc, proc.key, 1)
      .models.list()
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(OpenAI.InternalServerError);
    expect((error as Error).message).toBe(
      '500 The server had an error while processing your request. Sorry about that!',
    );
    const entries = await journal(proc, 2);
    expect(entries.map((e) => [e.path, e.status])).toEqual([
      ['/v1/models', 500],
      ['/v1/models', 500],
    ]);
  });
});

describe('AI look-alike: a request that breaks its description', () => {
  test('raises BadRequestError with the first problem and its param', async () => {
    const proc = await serveExample('ai');
    const openai = new OpenAI({ apiKey: proc.key, baseURL: `${proc.url}/v1`, maxRetries: 0 });
    const error = await openai.chat.completions.create({ model: 'gpt-4o-mini', messages: [] }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(OpenAI.BadRequestError);
    expect((error as InstanceType<typeof OpenAI.BadRequestError>).param).toBe('messages');
    expect((error as Error).message).toBe('400 body field messages must NOT have fewer than 1 items');
  });
});

describe('source-hosting look-alike, with the official @octokit/rest SDK', () => {
  const client = (proc: ServeProcess, auth: string) =>
    new Octokit({ auth, baseUrl: proc.url, log: { debug() {}, info() {}, warn() {}, error() {} } });
  type HttpError = Error & { status: number; response?: { headers: Record<string, string> } };

  test('calls succeed and parse (Authorization: token …)', async () => {
    const proc = await serveExample('source-hosting');
    const octokit = client(proc, proc.key);
    const { data: user } = await octokit.rest.users.getAuthenticated();
    expect(user.login).toBe('octocat');
    const { data: repo, headers } = await octokit.rest.repos.get({ owner: 'octo-org', repo: 'hello-world' });
    expect(repo.full_name).toBe('octo-org/hello-world');
    expect(headers['x-ratelimit-limit']).toBe('5000');
  });

  test('a bad token raises its RequestError (HttpError) 401 with the configured message', async () => {
    const proc = await serveExample('source-hosting');
    const error = (await client(proc, 'ghp_wrong')
      .rest.users.getAuthenticated()
      .catch((e: unknown) => e)) as HttpError;
    expect([error.name, error.status]).toEqual(['HttpError', 401]);
    expect(error.message).toContain('Bad credentials - https://docs.github.com/rest');
  });

  test('a 429 raises its RequestError with X-RateLimit-Remaining 0 (@octokit/rest has no retry plugin)', async () => {
    const proc = await serveExample('source-hosting', [HOUR_LIMIT]);
    const octokit = client(proc, proc.key);
    await octokit.rest.users.getAuthenticated();
    const error = (await octokit.rest.users.getAuthenticated().catch((e: unknown) => e)) as HttpError;
    expect([error.name, error.status]).toEqual(['HttpError', 429]);
    expect(error.message).toContain('API rate limit exceeded for user ID 1.');
    expect(error.response?.headers['x-ratelimit-remaining']).toBe('0');
    expect(Number(error.response?.headers['retry-after'])).toBeGreaterThan(3500);
  });

  test('a request that breaks the description raises its HttpError 422 whose message is the first problem', async () => {
    const proc = await serveExample('source-hosting');
    const octokit = client(proc, proc.key);
    const error = (await octokit.rest.repos
      .createForAuthenticatedUser({ description: 'no name' } as never)
      .catch((e: unknown) => e)) as HttpError;
    expect([error.name, error.status]).toEqual(['HttpError', 422]);
    expect(error.message).toBe('Invalid request.\n\nbody field name is required - https://docs.github.com/rest');
    const { data: repo, status } = await octokit.rest.repos.createForAuthenticatedUser({ name: 'hello-world' });
    expect([status, repo.full_name]).toEqual([201, 'octocat/hello-world']);
  });

  test('a simulated 500 raises its RequestError 500', async () => {
    const proc = await serveExample('source-hosting', [[['endpoints', 0, 'failRate'], 1]]);
    const error = (await client(proc, proc.key)
      .rest.users.getAuthenticated()
      .catch((e: unknown) => e)) as HttpError;
    expect([error.name, error.status]).toEqual(['HttpError', 500]);
    expect(error.message).toContain('Server Error');
    const entries = await journal(proc, 1);
    expect(entries.map((e) => [e.path, e.status])).toEqual([['/user', 500]]);
  });
});

describe("request ids: each look-alike sends its service's request id header, which the SDK reads", () => {
  /** The request id header of the journal's entries, oldest first. */
  async function journalIds(proc: ServeProcess, header: string, count: number): Promise<string[]> {
    await journal(proc, count);
    const { requests } = (await (await fetch(`${proc.url}/__mockapi/requests`)).json()) as {
      requests: Array<{ responseHeaders: Record<string, string> }>;
    };
    return requests.map((e) => e.responseHeaders[header]!);
  }

  test('stripe: lastResponse.requestId and err.requestId are the request-id of the answer; the same under the same seed', async () => {
    const proc = await serveExample('payments', [[['seed'], 42]]);
    const client = (key: string) =>
      new Stripe(key, {
        host: '127.0.0.1',
        port: Number(new URL(proc.url).port),
        protocol: 'http',
        maxNetworkRetries: 0,
      });
    const charges = await client(proc.key).charges.list();
    const error = (await client('sk_test_wrongKey000000004242')
      .charges.list()
      .catch((e: unknown) => e)) as Stripe.errors.StripeError;
    expect(error).toBeInstanceOf(Stripe.errors.StripeAuthenticationError);
    const ids = [charges.lastResponse.requestId, error.requestId];
    for (const id of ids) expect(id).toMatch(/^req_[0-9A-Za-z]{14}$/);
    expect(ids[0]).not.toBe(ids[1]);
    expect(await journalIds(proc, 'request-id', 2)).toEqual(ids);
    // Another server with the same seed gives its n-th request the same id.
    const again = await serveExample('payments', [[['seed'], 42]]);
    const first = await new Stripe(again.key, {
      host: '127.0.0.1',
      port: Number(new URL(again.url).port),
      protocol: 'http',
    }).charges.list();
    expect(first.lastResponse.requestId).toBe(ids[0]);
  });

  // openai 6 names an error's `requestID` (4.x named it `request_id`); a result keeps `_request_id`.
  test("openai: a result's _request_id and an error's requestID are the x-request-id of the answer", async () => {
    const proc = await serveExample('ai');
    const completion = await new OpenAI({
      apiKey: proc.key,
      baseURL: `${proc.url}/v1`,
      maxRetries: 0,
    }).chat.completions.create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'Hi' }] });
    const error = (await new OpenAI({
      apiKey: 'sk-proj-wrong0000000000009999',
      baseURL: `${proc.url}/v1`,
      maxRetries: 0,
    }).models
      .list()
      .catch((e: unknown) => e)) as InstanceType<typeof OpenAI.APIError>;
    expect(error).toBeInstanceOf(OpenAI.AuthenticationError);
    const ids = [completion._request_id, error.requestID];
    for (const id of ids) expect(id).toMatch(/^req_[0-9a-f]{32}$/);
    expect(ids[0]).not.toBe(ids[1]);
    expect(await journalIds(proc, 'x-request-id', 2)).toEqual(ids);
  });

  test('@octokit/rest: x-github-request-id on a response and on an HttpError', async () => {
    const proc = await serveExample('source-hosting');
    const octokit = (auth: string) =>
      new Octokit({ auth, baseUrl: proc.url, log: { debug() {}, info() {}, warn() {}, error() {} } });
    const { headers } = await octokit(proc.key).rest.users.getAuthenticated();
    const error = (await octokit('ghp_wrong')
      .rest.users.getAuthenticated()
      .catch((e: unknown) => e)) as Error & { response?: { headers: Record<string, string> } };
    const ids = [headers['x-github-request-id'], error.response?.headers['x-github-request-id']];
    for (const id of ids) expect(id).toMatch(/^[0-9A-F]{4}:[0-9A-F]{5}:[0-9A-F]{6}:[0-9A-F]{7}:[0-9A-F]{8}$/);
    expect(ids[0]).not.toBe(ids[1]);
    expect(await journalIds(proc, 'x-github-request-id', 2)).toEqual(ids);
  });
});
