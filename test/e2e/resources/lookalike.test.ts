// The look-alike examples keep state where the real APIs do: customers and PaymentIntents
// (stripe), batches (openai), issues (@octokit/rest) — each driven by its official SDK.
import { Octokit } from '@octokit/rest';
import OpenAI from 'openai';
import Stripe from 'stripe';
import { afterAll, describe, expect, test } from 'vitest';
import { serveExample, stopExamples } from '../../helpers/lookalike.js';

afterAll(stopExamples);

describe('look-alike examples with resources', () => {
  test("payments: a customer made, found, listed and deleted; a confirmed PaymentIntent; a missing one in Stripe's words", async () => {
    const proc = await serveExample('payments');
    const stripe = new Stripe(proc.key, { host: '127.0.0.1', port: Number(new URL(proc.url).port), protocol: 'http' });
    const made = await stripe.customers.create({ email: 'grace@example.com', metadata: { team: 'navy' } });
    expect(await stripe.customers.retrieve(made.id)).toEqual(made);
    const listed = await stripe.customers.list({ limit: 10 });
    expect(listed.data.map((c) => c.id)).toEqual([made.id, 'cus_NffrFeUfNV2Hib']);
    await stripe.customers.del(made.id);
    const missing = await stripe.customers.retrieve(made.id).catch((e: unknown) => e);
    expect(missing).toMatchObject({
      type: 'StripeInvalidRequestError',
      code: 'resource_missing',
      message: `No such customer: '${made.id}'`,
    });
    const intent = await stripe.paymentIntents.create({
      amount: 1099,
      currency: 'usd',
      customer: 'cus_NffrFeUfNV2Hib',
    });
    expect((await stripe.paymentIntents.confirm(intent.id)).status).toBe('processing');
    expect((await stripe.paymentIntents.retrieve(intent.id, { expand: ['customer'] })).customer).toMatchObject({
      id: 'cus_NffrFeUfNV2Hib',
      email: 'jenny.rosen@example.com',
    });
    const unknown = await stripe.paymentIntents.retrieve('pi_nope').catch((e: unknown) => e);
    expect(unknown).toMatchObject({ code: 'resource_missing', message: "No such payment_intent: 'pi_nope'" });
    const route = await stripe.charges.retrieve('ch_nope').catch((e: unknown) => e);
    expect((route as Error).message).toBe('Unrecognized request URL (GET: /v1/charges/ch_nope).'); // no collection there: the config's notFound
  });

  test("ai: a batch created, listed, cancelled; a missing one in OpenAI's words", async () => {
    const proc = await serveExample('ai');
    const openai = new OpenAI({ apiKey: proc.key, baseURL: `${proc.url}/v1`, maxRetries: 0 });
    const batch = await openai.batches.create({
      input_file_id: 'file-abc123',
      endpoint: '/v1/chat/completions',
      completion_window: '24h',
    });
    expect(batch).toMatchObject({ object: 'batch', status: 'validating', input_file_id: 'file-abc123' });
    const ids: string[] = [];
    for await (const b of openai.batches.list()) ids.push(b.id);
    expect(ids).toEqual([batch.id]);
    expect((await openai.batches.cancel(batch.id)).status).toBe('cancelling');
    const missing = await openai.batches.retrieve('batch_nope').catch((e: unknown) => e);
    expect(missing).toBeInstanceOf(OpenAI.NotFoundError);
    expect((missing as Error).message).toBe("404 No batch found with id 'batch_nope'.");
  });

  test('source-hosting: issues created per repository, listed with paginate, updated by number', async () => {
    const proc = await serveExample('source-hosting');
    const octokit = new Octokit({
      auth: proc.key,
      baseUrl: proc.url,
      log: { debug() {}, info() {}, warn() {}, error() {} },
    });
    const first = await octokit.rest.issues.create({ owner: 'octo-org', repo: 'hello-world', title: 'Found a bug' });
    expect(first.data).toMatchObject({ id: 1, number: 1, title: 'Found a bug', state: 'open' });
    await octokit.rest.issues.create({ owner: 'octo-org', repo: 'hello-world', title: 'Another' });
    await octokit.rest.issues.create({ owner: 'octo-org', repo: 'elsewhere', title: 'Not here' });
    const closed = await octokit.rest.issues.update({
      owner: 'octo-org',
      repo: 'hello-world',
      issue_number: 1,
      state: 'closed',
    });
    expect(closed.data.state).toBe('closed');
    const issues = await octokit.paginate(octokit.rest.issues.listForRepo, {
      owner: 'octo-org',
      repo: 'hello-world',
      per_page: 1,
      state: 'all',
    });
    expect(issues.map((i) => i.title)).toEqual(['Another', 'Found a bug']);
  });
});
