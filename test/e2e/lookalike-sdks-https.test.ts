// The look-alike examples over HTTPS, judged by the services' official SDKs (stripe, openai,
// @octokit/rest) given the project's generated CA the way each SDK's users give it one: an
// https.Agent with `ca` for stripe, an undici dispatcher with `connect.ca` for openai's fetch and
// for octokit's. Certificate checks stay on: without the CA, each SDK fails on the certificate.
import { readFile } from 'node:fs/promises';
import { Agent as HttpsAgent } from 'node:https';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { Agent as UndiciAgent, fetch as undiciFetch } from 'undici';
import Stripe from 'stripe';
import OpenAI from 'openai';
import { Octokit } from '@octokit/rest';
import { gapMs, journal, serveExample, stopExamples, type Change, type ServedExample } from '../helpers/lookalike.js';

afterAll(stopExamples);

/** The CA certificate as a user of the running server gets it: `GET /__mockapi/tls/ca.pem` over HTTP. */
async function caOf(proc: ServedExample): Promise<string> {
  const res = await fetch(`${proc.url}/__mockapi/tls/ca.pem`);
  expect(res.status).toBe(200);
  return res.text();
}

/** A certificate check that failed: the code Node's TLS gives a chain it cannot verify. */
const UNTRUSTED = /UNABLE_TO_VERIFY_LEAF_SIGNATURE|SELF_SIGNED_CERT_IN_CHAIN|UNABLE_TO_GET_ISSUER_CERT/;

/** The code of the TLS error at the end of an error's `cause` chain (or `detail`, as stripe keeps it). */
function tlsCode(error: unknown): string {
  let at = error as { code?: unknown; cause?: unknown; detail?: unknown } | undefined;
  for (let depth = 0; at !== undefined && at !== null && depth < 6; depth++) {
    if (typeof at.code === 'string' && UNTRUSTED.test(at.code)) return at.code;
    at = (at.cause ?? at.detail) as typeof at;
  }
  return `no certificate error in ${String(error)}`;
}

/** An endpoint added to an example: always failing (`failRate: 1`) or limited on its own. */
const added = (index: number, endpoint: Record<string, unknown>): Change => [['endpoints', index], endpoint];
const ONE_A_SECOND = { rateLimit: { requests: 1, window: '1s' } };
/** For a 429 on the second of two calls however slow the machine: a window no pause between them outlasts. */
const ONE_AN_HOUR = { rateLimit: { requests: 1, window: '1h' } };

test('no mockapi CA is trusted process-wide: only the CA given to each SDK is', () => {
  expect(process.env.NODE_EXTRA_CA_CERTS ?? '').not.toContain('.mockapi');
  expect(process.env.NODE_TLS_REJECT_UNAUTHORIZED).toBeUndefined();
});

describe('payments look-alike over HTTPS, stripe with an https.Agent carrying the CA', () => {
  let proc: ServedExample;
  let ca: string;
  beforeAll(async () => {
    proc = await serveExample(
      'payments',
      [
        added(1, { method: 'GET', path: '/balance', failRate: 1, response: { body: { object: 'balance' } } }),
        // an endpoint answers before the payment_intents resource (same method and path)
        added(2, {
          method: 'GET',
          path: '/payment_intents/:id',
          limits: ONE_AN_HOUR,
          response: { body: { id: '${params.id}', object: 'payment_intent' } },
        }),
      ],
      { https: true },
    );
    ca = await caOf(proc);
  });
  const client = (key: string, agent: HttpsAgent | undefined, maxNetworkRetries = 0) =>
    new Stripe(key, {
      host: '127.0.0.1',
      port: Number(new URL(proc.httpsUrl!).port),
      protocol: 'https',
      maxNetworkRetries,
      ...(agent === undefined ? {} : { httpAgent: agent }),
    });

  test('the CA served at /__mockapi/tls/ca.pem is the one in .mockapi/tls/ beside the config', async () => {
    expect(proc.httpsUrl).toMatch(/^https:\/\/127\.0\.0\.1:\d+$/);
    expect(ca).toBe(await readFile(join(proc.dir, '.mockapi', 'tls', 'ca.pem'), 'utf8'));
    expect(ca).toMatch(/^-----BEGIN CERTIFICATE-----\n/);
  });

  test('a call succeeds and parses', async () => {
    const customer = await client(proc.key, new HttpsAgent({ ca })).customers.retrieve('cus_NffrFeUfNV2Hib');
    expect(customer).toMatchObject({ id: 'cus_NffrFeUfNV2Hib', object: 'customer', email: 'jenny.rosen@example.com' });
  });

  test('a bad key raises StripeAuthenticationError with the configured message', async () => {
    const error = await client('sk_test_wrongKey000000004242', new HttpsAgent({ ca }))
      .customers.retrieve('cus_1')
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(Stripe.errors.StripeAuthenticationError);
    expect((error as Error).message).toBe('Invalid API Key provided: …4242');
  });

  test('an endpoint limit reached raises StripeRateLimitError', async () => {
    const stripe = client(proc.key, new HttpsAgent({ ca }));
    await stripe.paymentIntents.retrieve('pi_1');
    const error = await stripe.paymentIntents.retrieve('pi_2').catch((e: unknown) => e);
    expect(error).toBeInstanceOf(Stripe.errors.StripeRateLimitError);
    const retryAfter = (error as InstanceType<typeof Stripe.errors.StripeRateLimitError>).headers?.['retry-after'];
    expect(Number(retryAfter)).toBeGreaterThan(3500); // the hour's window: its one slot frees in about an hour
    expect((error as Error).message).toBe(`Request rate limit exceeded. Retry in ${retryAfter} s.`);
  });

  test('a simulated 500 raises StripeAPIError after its retry, both in the journal', async () => {
    const error = await client(proc.key, new HttpsAgent({ ca }), 1)
      .balance.retrieve()
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(Stripe.errors.StripeAPIError);
    expect((error as Error).message).toBe('An unknown error occurred');
    const entries = await journal(proc, 2, '/v1/balance');
    expect(entries.map((e) => [e.status, e.step])).toEqual([
      [500, 'failure'],
      [500, 'failure'],
    ]);
  });

  test('without the CA, stripe fails on the certificate (StripeConnectionError), and nothing reaches the journal', async () => {
    const error = await client(proc.key, undefined)
      .customers.retrieve('cus_untrusted')
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(Stripe.errors.StripeConnectionError);
    expect(tlsCode(error)).toMatch(UNTRUSTED);
    const { requests } = (await (await fetch(`${proc.url}/__mockapi/requests`)).json()) as {
      requests: Array<{ path: string }>;
    };
    expect(requests.map((e) => e.path)).not.toContain('/v1/customers/cus_untrusted');
  });
});

describe('AI look-alike over HTTPS, openai with fetchOptions.dispatcher carrying the CA', () => {
  let proc: ServedExample;
  let ca: string;
  beforeAll(async () => {
    proc = await serveExample(
      'ai',
      [
        added(3, {
          method: 'GET',
          path: '/models/:model',
          failRate: 1,
          response: { body: { id: '${params.model}', object: 'model' } },
        }),
        [['endpoints', 2, 'limits'], ONE_A_SECOND],
      ],
      { https: true },
    );
    ca = await caOf(proc);
  });
  const client = (apiKey: string, maxRetries = 0, trusted = true) =>
    new OpenAI({
      apiKey,
      baseURL: `${proc.httpsUrl}/v1`,
      maxRetries,
      ...(trusted ? { fetchOptions: { dispatcher: new UndiciAgent({ connect: { ca } }) } } : {}),
    });

  test('calls succeed and parse', async () => {
    const openai = client(proc.key);
    const models = await openai.models.list();
    expect(models.data.map((m) => m.id)).toEqual(['gpt-4o-mini', 'text-embedding-3-small']);
    const completion = await openai.chat.completions.create({
      model: 'gpt-4o-mini',
      messages: [{ role: 'user', content: 'Hi' }],
    });
    expect(completion.choices[0]?.message.content).toBe('Hello from the mock.');
  });

  test('a bad key raises AuthenticationError with the configured message', async () => {
    const error = await client('sk-proj-wrong0000000000009999')
      .models.list()
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(OpenAI.AuthenticationError);
    expect((error as Error).message).toBe(
      '401 Incorrect API key provided: …9999. You can find your API key at https://platform.openai.com/account/api-keys.',
    );
  });

  test('an endpoint limit reached: openai retries after Retry-After, the journal shows the retry no earlier than told', async () => {
    const openai = client(proc.key, 2);
    await openai.embeddings.create({ model: 'text-embedding-3-small', input: 'a', encoding_format: 'float' });
    const second = await openai.embeddings.create({
      model: 'text-embedding-3-small',
      input: 'b',
      encoding_format: 'float',
    });
    expect(second.data[0]?.embedding).toHaveLength(3);
    const entries = await journal(proc, 3, '/v1/embeddings');
    expect(entries.map((e) => e.status)).toEqual([200, 429, 200]);
    expect(gapMs(entries[1]!, entries[2]!)).toBeGreaterThanOrEqual(1000); // Retry-After: 1
  });

  test('a simulated 500 raises InternalServerError after its retry, both in the journal', async () => {
    const error = await client(proc.key, 1)
      .models.retrieve('gpt-4o-mini')
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(OpenAI.InternalServerError);
    expect((error as Error).message).toBe(
      '500 The server had an error while processing your request. Sorry about that!',
    );
    const entries = await journal(proc, 2, '/v1/models/gpt-4o-mini');
    expect(entries.map((e) => [e.status, e.step])).toEqual([
      [500, 'failure'],
      [500, 'failure'],
    ]);
  });

  test('without the CA, openai fails on the certificate (APIConnectionError)', async () => {
    const error = await client(proc.key, 0, false)
      .models.list()
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(OpenAI.APIConnectionError);
    expect(tlsCode(error)).toMatch(UNTRUSTED);
  });
});

describe('source-hosting look-alike over HTTPS, octokit with request.fetch on an undici dispatcher carrying the CA', () => {
  type HttpError = Error & { status: number; response?: { headers: Record<string, string> } };
  let proc: ServedExample;
  let ca: string;
  beforeAll(async () => {
    proc = await serveExample(
      'source-hosting',
      [
        // an endpoint answers before the issues resource (same method and path)
        added(3, { method: 'GET', path: '/repos/:owner/:repo/issues', failRate: 1, response: { body: [] } }),
        added(4, {
          method: 'GET',
          path: '/orgs/:org',
          limits: ONE_AN_HOUR,
          response: { body: { login: '${params.org}', id: 9919 } },
        }),
      ],
      { https: true },
    );
    ca = await caOf(proc);
  });
  const silent = { debug() {}, info() {}, warn() {}, error() {} };
  const client = (auth: string, trusted = true) => {
    const dispatcher = new UndiciAgent({ connect: { ca } });
    const request = trusted
      ? { fetch: ((url: string, init: object) => undiciFetch(url, { ...init, dispatcher })) as unknown as typeof fetch }
      : {};
    return new Octokit({ auth, baseUrl: proc.httpsUrl, log: silent, request });
  };

  test('calls succeed and parse (Authorization: token …)', async () => {
    const octokit = client(proc.key);
    const { data: user } = await octokit.rest.users.getAuthenticated();
    expect(user.login).toBe('octocat');
    const { data: repo, headers } = await octokit.rest.repos.get({ owner: 'octo-org', repo: 'hello-world' });
    expect(repo.full_name).toBe('octo-org/hello-world');
    expect(headers['x-ratelimit-limit']).toBe('5000');
  });

  test('a bad token raises its RequestError (HttpError) 401 with the configured message', async () => {
    const error = (await client('ghp_wrong')
      .rest.users.getAuthenticated()
      .catch((e: unknown) => e)) as HttpError;
    expect([error.name, error.status]).toEqual(['HttpError', 401]);
    expect(error.message).toContain('Bad credentials - https://docs.github.com/rest');
  });

  test('an endpoint limit reached raises its RequestError 429, the headers describing that window', async () => {
    const octokit = client(proc.key);
    await octokit.rest.orgs.get({ org: 'octo-org' });
    const error = (await octokit.rest.orgs.get({ org: 'octo-org' }).catch((e: unknown) => e)) as HttpError;
    expect([error.name, error.status]).toEqual(['HttpError', 429]);
    expect(error.message).toContain('API rate limit exceeded for user ID 1.');
    expect(error.response?.headers['x-ratelimit-limit']).toBe('1');
    expect(error.response?.headers['x-ratelimit-remaining']).toBe('0');
    expect(Number(error.response?.headers['retry-after'])).toBeGreaterThan(3500);
  });

  test('a simulated 500 raises its RequestError 500', async () => {
    const error = (await client(proc.key)
      .rest.issues.listForRepo({ owner: 'octo-org', repo: 'hello-world' })
      .catch((e: unknown) => e)) as HttpError;
    expect([error.name, error.status]).toEqual(['HttpError', 500]);
    expect(error.message).toContain('Server Error');
    const entries = await journal(proc, 1, '/repos/octo-org/hello-world/issues');
    expect(entries.map((e) => [e.status, e.step])).toEqual([[500, 'failure']]);
  });

  test('without the CA, octokit fails on the certificate (RequestError 500 from fetch)', async () => {
    const error = (await client(proc.key, false)
      .rest.users.getAuthenticated()
      .catch((e: unknown) => e)) as HttpError;
    expect(error.name).toBe('HttpError');
    expect(tlsCode(error)).toMatch(UNTRUSTED);
  });
});
