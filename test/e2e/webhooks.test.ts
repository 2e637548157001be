// Webhooks through the real CLI: a node:http receiver reads the raw bytes of each event and the
// providers' own libraries verify them (stripe, standardwebhooks, @octokit/webhooks-methods);
// chaos signatures are rejected by them; retries follow the virtual clock with one event id.
import { afterAll, afterEach, beforeAll, describe, expect, test } from 'vitest';
import { writeFile } from 'node:fs/promises';
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import Stripe from 'stripe';
import { Webhook } from 'standardwebhooks';
import { verify as verifyGithub } from '@octokit/webhooks-methods';
import { runCli, startServe, useTempDir, waitFor, writeConfig, type ServeProcess } from '../helpers/cli.js';
import { admin, mock } from '../helpers/control.js';

const KEY = 'mk_webhooksKey000000000000000000001';
const STRIPE_SECRET = 'whsec_test_stripe_secret_0001';
const STANDARD_SECRET = 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw';
const GITHUB_SECRET = 'gh-secret-webhooks-0001';
const auth = { 'x-api-key': KEY, 'content-type': 'application/json' };

interface Received {
  path: string;
  headers: IncomingHttpHeaders;
  body: Buffer;
}

/** A receiver that keeps the raw bytes of every POST and answers with the next status of `plan` (then 200). */
async function startReceiver(): Promise<{ url: string; got: Received[]; plan: number[]; server: Server }> {
  const got: Received[] = [];
  const plan: number[] = [];
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      got.push({ path: req.url ?? '/', headers: req.headers, body: Buffer.concat(chunks) });
      res.writeHead(plan.shift() ?? 200).end();
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, got, plan, server };
}

function config(receiver: string, extra = ''): string {
  return `apiKey: ${KEY}
webhooks:
  targets:
    app:
      url: ${receiver}/stripe
      sign: { scheme: stripe, secret: "\${env.MOCKAPI_WHSEC ?? '${STRIPE_SECRET}'}" }
      retry: { schedule: [1m, 5m], timeout: 5s }
    std:
      url: ${receiver}/standard
      sign: { scheme: standard, secret: ${STANDARD_SECRET} }
      retry: { schedule: none }
    gh:
      url: ${receiver}/github
      sign: { scheme: github, secret: ${GITHUB_SECRET} }
      retry: { schedule: none }
${extra}  events:
    charge.succeeded:
      envelope: stripe
      data: { object: { id: "ch_\${uuid()}", object: charge, status: succeeded } }
    invoice.paid:
      envelope: standard
      data: { invoice: inv_1 }
    push:
      envelope: github
      data: { ref: refs/heads/main }
endpoints:
  - method: POST
    path: /v1/charges
    response:
      status: 201
      body: { id: "ch_\${uuid()}", object: charge, amount: "\${int(body.amount)}" }
      send: [{ event: charge.succeeded, to: app, data: { object: "\${response.body}" } }]
  - method: POST
    path: /invoices
    failRate: 0
    response:
      body: { ok: true }
      send: [{ event: invoice.paid, to: std }, { event: push, to: gh, data: { pusher: "\${body.who}" } }]
  - method: POST
    path: /always-fails
    failRate: 1
    response:
      body: { ok: true }
      send: [{ event: charge.succeeded, to: app }]
`;
}

const stripe = new Stripe('sk_test_webhooks');
const dir = useTempDir('mockapi-webhooks-');
let receiver: Awaited<ReturnType<typeof startReceiver>>;
let serve: ServeProcess | undefined;

beforeAll(async () => {
  receiver = await startReceiver();
});
afterAll(() => new Promise<void>((r) => receiver.server.close(() => r())));
afterEach(async () => {
  await serve?.stop();
  serve = undefined;
  receiver.got.length = 0;
  receiver.plan.length = 0;
});

async function start(args: string[] = [], extra = ''): Promise<ServeProcess> {
  const file = await writeConfig(dir.path, config(receiver.url, extra));
  serve = await startServe(['-c', file, '--no-state', '--no-watch', '--seed', '7', ...args]);
  return serve;
}

const received = (path: string, count = 1) =>
  waitFor(() =>
    receiver.got.filter((r) => r.path === path).length >= count
      ? receiver.got.filter((r) => r.path === path)
      : undefined,
  );

describe('events signed as the real services sign them', () => {
  test('stripe: constructEvent accepts the raw bytes; the event carries the answer just sent; the journal names the delivery', async () => {
    const s = await start();
    const answer = await mock(s.url, 'POST', '/mock/v1/charges', {
      headers: auth,
      body: JSON.stringify({ amount: 1200 }),
    });
    expect(answer.status).toBe(201);
    const [got] = await received('/stripe');
    const event = stripe.webhooks.constructEvent(got!.body, got!.headers['stripe-signature'] as string, STRIPE_SECRET);
    expect(event).toMatchObject({
      object: 'event',
      type: 'charge.succeeded',
      livemode: false,
      data: { object: JSON.parse(answer.text) },
    });
    expect(event.id).toMatch(/^evt_[0-9a-f]{24}$/);
    expect(() =>
      stripe.webhooks.constructEvent(got!.body, got!.headers['stripe-signature'] as string, 'whsec_other'),
    ).toThrow();
    const journal = await admin(s.url, 'GET', 'requests');
    expect(journal.body.requests.at(-1).notes).toEqual(['webhook charge.succeeded → app: whd_1']);
    const log = await waitFor(async () => {
      const found = (await admin(s.url, 'GET', 'webhooks/deliveries?status=delivered')).body.deliveries;
      return found.length === 1 ? found : undefined;
    });
    expect(log[0]).toMatchObject({
      id: 'whd_1',
      event: 'charge.succeeded',
      eventId: event.id,
      target: 'app',
      endpoint: 'POST /v1/charges',
      status: 'delivered',
      attempts: [{ status: 200, error: null }],
    });
    // The delivery thread wrote the bytes sent; the log writes what it shows from the same parts: the same text.
    expect(log[0].body).toBe(got!.body.toString('utf8'));
    expect(log[0].headers).toEqual({
      'content-type': 'application/json',
      'user-agent': 'mockapi-webhooks',
      'x-mockapi-webhook-delivery': '1',
      'stripe-signature': got!.headers['stripe-signature'],
    });
  });

  test('standard and github: Webhook.verify and verify() accept them', async () => {
    const s = await start();
    expect(
      (await mock(s.url, 'POST', '/mock/invoices', { headers: auth, body: JSON.stringify({ who: 'octocat' }) })).status,
    ).toBe(200);
    const [std] = await received('/standard');
    const verified = new Webhook(STANDARD_SECRET).verify(
      std!.body.toString('utf8'),
      std!.headers as Record<string, string>,
    );
    expect(verified).toMatchObject({ type: 'invoice.paid', data: { invoice: 'inv_1' } });
    expect(std!.headers['webhook-id']).toMatch(/^msg_/);
    const [gh] = await received('/github');
    expect(
      await verifyGithub(GITHUB_SECRET, gh!.body.toString('utf8'), gh!.headers['x-hub-signature-256'] as string),
    ).toBe(true);
    expect(await verifyGithub('wrong', gh!.body.toString('utf8'), gh!.headers['x-hub-signature-256'] as string)).toBe(
      false,
    );
    expect(JSON.parse(gh!.body.toString('utf8'))).toEqual({ ref: 'refs/heads/main', pusher: 'octocat' });
    expect(gh!.headers['x-github-event']).toBe('push');
    // Once both are delivered (the receiver has answered): the headers shown are the delivered attempt's.
    type Shown = Array<{ target: string; body: string; headers: Record<string, string> }>;
    const shown = await waitFor(async () => {
      const found = (await admin(s.url, 'GET', 'webhooks/deliveries?status=delivered')).body.deliveries as Shown;
      return found.length >= 2 ? found : undefined;
    });
    for (const [got, names] of [
      [std!, ['webhook-id', 'webhook-timestamp', 'webhook-signature']],
      [gh!, ['x-hub-signature-256', 'x-github-event', 'x-github-delivery']],
    ] as const) {
      const entry = shown.find((d) => d.body === got.body.toString('utf8'));
      expect(entry).toBeDefined();
      for (const name of names) expect(entry!.headers[name]).toBe(got.headers[name]);
    }
  });

  test('a server whose virtual clock is years in the past still signs on the real clock: accepted', async () => {
    const s = await start(['--clock', '2001-01-01T00:00:00Z']);
    await mock(s.url, 'POST', '/mock/v1/charges', { headers: auth, body: '{"amount":1}' });
    const [got] = await received('/stripe');
    const event = stripe.webhooks.constructEvent(got!.body, got!.headers['stripe-signature'] as string, STRIPE_SECRET);
    expect(new Date(event.created * 1000).getUTCFullYear()).toBe(2001); // contents follow the server's clock
  });

  test('a simulated failure sends nothing', async () => {
    const s = await start();
    expect((await mock(s.url, 'POST', '/mock/always-fails', { headers: auth, body: '{}' })).status).toBe(500);
    expect(
      (await mock(s.url, 'POST', '/mock/v1/charges', { headers: { 'content-type': 'application/json' }, body: '{}' }))
        .status,
    ).toBe(401);
    expect((await admin(s.url, 'GET', 'webhooks/deliveries')).body).toEqual({ deliveries: [] });
  });
});

describe('streamed answers', () => {
  test('a stream that sends all its events fires its send when it ends; a cut stream sends nothing', async () => {
    const streams = `  - method: POST
    path: /stream-ok
    response:
      stream: { events: [{ data: one }, { data: two }] }
      send: [{ event: invoice.paid, to: std }]
  - method: POST
    path: /stream-cut
    response:
      stream: { events: [{ data: one }, { data: two }, { data: three }], faults: [{ kind: cut, after: 1, rate: 1 }] }
      send: [{ event: invoice.paid, to: std }]
`;
    const file = await writeConfig(dir.path, config(receiver.url) + streams);
    const s = (serve = await startServe(['-c', file, '--no-state', '--no-watch', '--seed', '7']));
    const cut = await mock(s.url, 'POST', '/mock/stream-cut', { headers: auth, body: '{}' });
    expect(cut.status).toBe(200);
    const cutEntry = await waitFor(async () =>
      (await admin(s.url, 'GET', 'requests')).body.requests.find(
        (r: { path: string }) => r.path === '/mock/stream-cut',
      ),
    );
    expect(cutEntry.stream).toMatchObject({ ended: 'cut' });
    expect((await admin(s.url, 'GET', 'webhooks/deliveries')).body).toEqual({ deliveries: [] });
    const ok = await mock(s.url, 'POST', '/mock/stream-ok', { headers: auth, body: '{}' });
    expect(ok.text).toContain('two');
    const [std] = await received('/standard');
    expect(
      new Webhook(STANDARD_SECRET).verify(std!.body.toString('utf8'), std!.headers as Record<string, string>),
    ).toMatchObject({ type: 'invoice.paid' });
    const okEntry = await waitFor(async () =>
      (await admin(s.url, 'GET', 'requests')).body.requests.find((r: { path: string }) => r.path === '/mock/stream-ok'),
    );
    expect(okEntry.stream).toMatchObject({ ended: 'complete' });
    expect(okEntry.notes).toEqual(['webhook invoice.paid → std: whd_1']);
  });
});

describe("chaos is rejected by the providers' libraries", () => {
  test('badSignature and staleTimestamp', async () => {
    const chaos = `    bad:
      url: ${receiver.url}/bad
      sign: { scheme: stripe, secret: ${STRIPE_SECRET} }
      retry: { schedule: none }
      chaos: { badSignature: 1 }
    stale:
      url: ${receiver.url}/stale
      sign: { scheme: standard, secret: ${STANDARD_SECRET} }
      retry: { schedule: none }
      chaos: { staleTimestamp: 1 }
`;
    const s = await start([], chaos);
    expect((await admin(s.url, 'POST', 'webhooks/trigger', { event: 'charge.succeeded', to: 'bad' })).status).toBe(201);
    expect((await admin(s.url, 'POST', 'webhooks/trigger', { event: 'invoice.paid', to: 'stale' })).status).toBe(201);
    const [bad] = await received('/bad');
    expect(() =>
      stripe.webhooks.constructEvent(bad!.body, bad!.headers['stripe-signature'] as string, STRIPE_SECRET),
    ).toThrow(/signature/i);
    const [stale] = await received('/stale');
    expect(() =>
      new Webhook(STANDARD_SECRET).verify(stale!.body.toString('utf8'), stale!.headers as Record<string, string>),
    ).toThrow(/timestamp/i);
    const deliveries = (await admin(s.url, 'GET', 'webhooks/deliveries')).body.deliveries;
    expect(deliveries.map((d: { chaos: string[] }) => d.chaos)).toEqual([['badSignature'], ['staleTimestamp']]);
  });
});

describe('retries on the virtual clock', () => {
  test('500, 500, 200: the retries come when the clock is advanced past each wait, with one event id, each signed anew', async () => {
    const s = await start(['--clock', '2026-01-01T00:00:00Z']);
    receiver.plan.push(500, 500);
    await mock(s.url, 'POST', '/mock/v1/charges', { headers: auth, body: '{"amount":5}' });
    await received('/stripe', 1);
    const pending = await waitFor(async () => {
      const [d] = (await admin(s.url, 'GET', 'webhooks/deliveries')).body.deliveries;
      return d?.attempts.length === 1 ? d : undefined;
    });
    expect(pending).toMatchObject({ status: 'pending', attempts: [{ status: 500 }] });
    expect(Date.parse(pending.nextAttempt) - Date.parse(pending.attempts[0].time)).toBeGreaterThanOrEqual(60_000);
    expect(receiver.got).toHaveLength(1); // nothing more until the clock moves
    await admin(s.url, 'POST', 'clock', { advance: '1m' });
    await received('/stripe', 2);
    await waitFor(async () =>
      (await admin(s.url, 'GET', 'webhooks/deliveries')).body.deliveries[0].attempts.length === 2 ? true : undefined,
    );
    await admin(s.url, 'POST', 'clock', { advance: '5m' });
    const all = await received('/stripe', 3);
    const events = all.map((r) =>
      stripe.webhooks.constructEvent(r.body, r.headers['stripe-signature'] as string, STRIPE_SECRET),
    );
    expect(new Set(events.map((e) => e.id)).size).toBe(1);
    const done = await waitFor(async () => {
      const [d] = (await admin(s.url, 'GET', 'webhooks/deliveries?status=delivered')).body.deliveries;
      return d;
    });
    expect(done.attempts.map((a: { status: number }) => a.status)).toEqual([500, 500, 200]);
    const targets = (await admin(s.url, 'GET', 'webhooks')).body.targets;
    expect(targets.find((t: { name: string }) => t.name === 'app')).toEqual({
      name: 'app',
      url: `${receiver.url}/stripe`,
      scheme: 'stripe',
      secret: expect.stringMatching(/^sha256:[0-9a-f]{12}$/),
      disabled: false,
      pending: 0,
      delivered: 1,
      failed: 0,
    });
  });

  test('410 disables the target', async () => {
    const s = await start();
    receiver.plan.push(410);
    await admin(s.url, 'POST', 'webhooks/trigger', { event: 'charge.succeeded', to: 'app' });
    const [d] = await waitFor(async () => {
      const found = (await admin(s.url, 'GET', 'webhooks/deliveries?status=failed')).body.deliveries;
      return found.length === 1 ? found : undefined;
    });
    expect(d.error).toMatch(/410/);
    expect(
      (await admin(s.url, 'GET', 'webhooks')).body.targets.find((t: { name: string }) => t.name === 'app').disabled,
    ).toBe(true);
  });
});

describe('secrets never shown', () => {
  test('admin answers and the journal show fingerprints, never the secret', async () => {
    const s = await start();
    await mock(s.url, 'POST', '/mock/invoices', { headers: auth, body: JSON.stringify({ who: GITHUB_SECRET }) });
    await received('/github');
    const texts = [
      await admin(s.url, 'GET', 'webhooks'),
      await admin(s.url, 'GET', 'requests'),
      await admin(s.url, 'GET', 'webhooks/deliveries'),
    ].map((a) => JSON.stringify(a.body));
    for (const text of texts) {
      expect(text).not.toContain(GITHUB_SECRET);
      expect(text).not.toContain(STRIPE_SECRET);
      expect(text).not.toContain(STANDARD_SECRET);
    }
  });
});

describe('config validation', () => {
  test('unknown event and target, bad durations and URLs are reported at their line', async () => {
    const file = await writeConfig(
      dir.path,
      `apiKey: ${KEY}
webhooks:
  targets:
    app:
      url: not-a-url
      sign: { scheme: standard, secret: plain-text }
      retry: { schedule: [1s, soon] }
  events:
    charge.succeeded: { envelope: stripe, data: { x: "\${response.nope(}" } }
endpoints:
  - method: POST
    path: /v1/charges
    response:
      send: [{ event: charge.succeded, to: ap, after: 5 parsecs }]
`,
    );
    const result = await runCli(['validate', '-c', file]);
    expect(result.code).toBe(1);
    const lines = result.stderr.split('\n');
    expect(lines.some((l) => /:5:\d+: .*webhooks\.targets\.app\.url.*http:\/\/ or https:\/\//.test(l))).toBe(true);
    expect(lines.some((l) => /:6:\d+: .*webhooks\.targets\.app\.sign\.secret.*whsec_/.test(l))).toBe(true);
    expect(lines.some((l) => /:7:\d+: .*retry\.schedule\[1\]/.test(l))).toBe(true);
    expect(lines.some((l) => /:14:\d+: .*send\[0\]\.event.*did you mean "charge\.succeeded"\?/.test(l))).toBe(true);
    expect(lines.some((l) => /:14:\d+: .*send\[0\]\.to.*did you mean "app"\?/.test(l))).toBe(true);
    expect(lines.some((l) => /send\[0\]\.after/.test(l))).toBe(true);
  });
});

describe('CLI and stop', () => {
  test('mockapi webhooks trigger and list; pending deliveries are reported on stderr at stop', async () => {
    const s = await start();
    const file = `${dir.path}/mockapi.yaml`;
    const trigger = await runCli([
      'webhooks',
      'trigger',
      'push',
      '--to',
      'gh',
      '--data',
      '{"ref":"refs/heads/dev"}',
      '-c',
      file,
    ]);
    expect(trigger.stderr).toBe('');
    expect(trigger.code).toBe(0);
    expect(trigger.stdout).toMatch(/^whd_1 push \([0-9a-f-]{36}\) → gh pending/);
    const [got] = await received('/github');
    expect(JSON.parse(got!.body.toString('utf8'))).toEqual({ ref: 'refs/heads/dev' });
    await waitFor(async () =>
      (await admin(s.url, 'GET', 'webhooks/deliveries?status=delivered')).body.deliveries.length === 1
        ? true
        : undefined,
    );
    const list = await runCli(['webhooks', 'list', '-c', file]);
    expect(list.stdout.trim()).toMatch(/^whd_1 push \(.+\) → gh delivered \(attempts: 200\)$/);
    receiver.plan.push(500);
    await admin(s.url, 'POST', 'webhooks/trigger', { event: 'charge.succeeded', to: 'app' });
    await waitFor(async () =>
      (await admin(s.url, 'GET', 'webhooks')).body.targets[0].pending === 1 && receiver.got.length === 2
        ? true
        : undefined,
    );
    expect(await s.stop()).toBe(0);
    expect(s.stderr()).toMatch(
      /1 webhook delivery was still pending at stop and will not be sent \(serve --drain-webhooks <duration> waits for them\)/,
    );
    serve = undefined;
  });

  test('serve --drain-webhooks waits for a delivery due before the deadline', async () => {
    const s = await start(
      ['--drain-webhooks', '10s'],
      `    slow:
      url: ${receiver.url}/slow
      sign: { scheme: none }
      retry: { schedule: [300ms] }
`,
    );
    receiver.plan.push(500);
    await admin(s.url, 'POST', 'webhooks/trigger', { event: 'push', to: 'slow' });
    await received('/slow', 1);
    expect(await s.stop()).toBe(0);
    expect(receiver.got.filter((r) => r.path === '/slow')).toHaveLength(2);
    expect(s.stderr()).not.toMatch(/still pending/);
    serve = undefined;
  });
});

describe('hot reload and the event stream', () => {
  test('a reload changes a target; the event stream tells each change of a delivery as a `webhook` event', async () => {
    const file = await writeConfig(dir.path, config(receiver.url));
    serve = await startServe(['-c', file, '--no-state', '--seed', '7']);
    const s = serve;
    await writeFile(file, config(receiver.url).replace(`${receiver.url}/github`, `${receiver.url}/github-v2`));
    await s.waitForOutput(/reloaded/);
    const events = await fetch(`${s.url}/__mockapi/events`);
    const reader = events.body!.getReader();
    await admin(s.url, 'POST', 'webhooks/trigger', { event: 'push', to: 'gh' });
    await received('/github-v2');
    let text = '';
    while (!/"status":"delivered"/.test(text)) text += new TextDecoder().decode((await reader.read()).value);
    await reader.cancel();
    const webhookEvents = text.split('\n\n').filter((block) => block.startsWith('event: webhook'));
    expect(webhookEvents.map((block) => JSON.parse(block.slice(block.indexOf('data: ') + 6)).status)).toEqual([
      'pending',
      'delivered',
    ]);
  });
});
