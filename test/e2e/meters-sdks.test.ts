// Meters judged by the providers' own official SDKs: openai against the AI look-alike
// (examples/look-alike/ai: a tokens-per-minute meter, a monthly spend budget, OpenAI's headers) and
// @anthropic-ai/sdk against an Anthropic-shaped config (input and output token meters, Anthropic's
// headers). A spent budget is `insufficient_quota`, a full window `rate_limit_exceeded`; the SDKs'
// retries wait as the headers say, and the journal shows each retry, futile ones noted.
import Anthropic from '@anthropic-ai/sdk';
import OpenAI from 'openai';
import { afterAll, describe, expect, test } from 'vitest';
import { runCli, startServe, useTempDir, writeConfig, type ServeProcess } from '../helpers/cli.js';
import { gapMs, journal, serveExample, stopExamples, type Change, type Entry } from '../helpers/lookalike.js';

afterAll(stopExamples);

const openai = (proc: ServeProcess & { key: string }, maxRetries = 0) =>
  new OpenAI({ apiKey: proc.key, baseURL: `${proc.url}/v1`, maxRetries });
const chat = (max_tokens: number, extra: object = {}) => ({
  model: 'gpt-4o-mini',
  messages: [{ role: 'user' as const, content: 'Hi' }],
  max_tokens,
  ...extra,
});
/** The reserve of `chat(n)`: a quarter of the messages' JSON, plus max_tokens. */
const reserveOf = (n: number) => JSON.stringify(chat(n).messages).length / 4 + n;
const TOKENS = (limit: number, window: string): Change => [['limits', 'meters', 'tokens'], { limit, window }];

async function usage(
  proc: ServeProcess,
): Promise<{ meters: Record<string, { used: number; limit: number; remaining: number }> }> {
  return (await fetch(`${proc.url}/__mockapi/usage`)).json() as never;
}

describe('openai against the AI look-alike', () => {
  test('a full tokens window raises RateLimitError with code rate_limit_exceeded, and the x-ratelimit-*-tokens headers', async () => {
    const proc = await serveExample('ai', [TOKENS(300, '1m')]);
    const client = openai(proc);
    const { data, response } = await client.chat.completions.create(chat(280)).withResponse();
    expect(data.usage?.total_tokens).toBe(17);
    expect(response.headers.get('x-ratelimit-limit-tokens')).toBe('300');
    expect(response.headers.get('x-ratelimit-remaining-tokens')).toBe(String(Math.floor(300 - reserveOf(280))));
    expect(response.headers.get('x-ratelimit-reset-tokens')).toMatch(/^(59\.\d+s|1m0s)$/);
    expect(response.headers.get('x-ratelimit-remaining-requests')).toBe('59');
    // The settle took the reserve back down to the 17 tokens the answer used: 17 + 288 is over 300.
    expect((await usage(proc)).meters.tokens?.used).toBe(17);
    const error = await client.chat.completions.create(chat(280)).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(OpenAI.RateLimitError);
    const rateError = error as InstanceType<typeof OpenAI.RateLimitError>;
    expect(rateError.code).toBe('rate_limit_exceeded');
    expect(rateError.type).toBe('tokens');
    expect(rateError.message).toMatch(
      /^429 Rate limit reached on tokens per 1m: Limit 300, Used 17, Requested 288\. Please try again in \d+(\.\d+)?s\.$/,
    );
    expect(Number(rateError.headers.get('retry-after'))).toBeGreaterThan(50);
    expect(Number(rateError.headers.get('retry-after-ms'))).toBeGreaterThan(50_000);
    expect(rateError.headers.get('x-ratelimit-remaining-tokens')).toBe('283');
  });

  test('its retries wait as retry-after-ms says: the journal shows the retry admitted once the window freed', async () => {
    // A 3 s window: the second call, sent as soon as the first is answered, lands in it even on a
    // loaded machine (a window the machine outlasts would admit it at once, and prove nothing).
    const proc = await serveExample('ai', [TOKENS(300, '3s')]);
    const client = openai(proc, 2);
    await client.chat.completions.create(chat(280));
    // The settle left 17; this one reserves 288: it fits once the first leaves the window.
    await client.chat.completions.create(chat(280));
    const entries = (await journal(proc, 3)) as Array<Entry & { responseHeaders: Record<string, string> }>;
    expect(entries.map((e) => e.status)).toEqual([200, 429, 200]);
    const waitMs = Number(entries[1]!.responseHeaders['retry-after-ms']);
    expect(waitMs).toBeGreaterThan(0);
    // The SDK waited what retry-after-ms said (its own backoff would be at most 0.5 s), and no sooner.
    expect(gapMs(entries[1]!, entries[2]!)).toBeGreaterThanOrEqual(waitMs - 5);
    expect(gapMs(entries[0]!, entries[2]!)).toBeGreaterThanOrEqual(2995);
    expect(entries[2]!.notes.filter((n) => n.startsWith('early retry'))).toEqual([]);
  });

  test("a spent budget raises RateLimitError with code insufficient_quota; the SDK's retries are futile, and noted so", async () => {
    const proc = await serveExample('ai');
    const set = await fetch(`${proc.url}/__mockapi/usage`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ meter: 'spend', value: 5 }),
    });
    expect(set.status).toBe(200);
    expect(((await set.json()) as { meters: Record<string, unknown> }).meters.spend).toMatchObject({
      window: 'month',
      limit: 5,
      used: 5,
      remaining: 0,
    });
    const error = await openai(proc, 2)
      .chat.completions.create(chat(10))
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(OpenAI.RateLimitError);
    expect((error as InstanceType<typeof OpenAI.RateLimitError>).code).toBe('insufficient_quota');
    expect((error as InstanceType<typeof OpenAI.RateLimitError>).headers.get('retry-after')).toBeNull();
    const entries = await journal(proc, 3);
    expect(entries.map((e) => [e.status, e.step])).toEqual([
      [429, 'quota'],
      [429, 'quota'],
      [429, 'quota'],
    ]);
    expect(entries.map((e) => /futile retry \(\d\)/.exec(e.notes.join('; '))?.[0])).toEqual([
      undefined,
      'futile retry (1)',
      'futile retry (2)',
    ]);
    // The SDK's own backoff, at least 0.5 s × 0.75 apart: what the journal shows a client lose.
    expect(gapMs(entries[0]!, entries[1]!)).toBeGreaterThanOrEqual(375);
    const futile = (await (await fetch(`${proc.url}/__mockapi/requests?futile=true`)).json()) as {
      requests: unknown[];
    };
    expect(futile.requests).toHaveLength(2);
    const listed = await runCli(['requests', '-c', `${proc.dir}/mockapi.yaml`, '--futile'], { cwd: proc.dir });
    expect(listed.code).toBe(0);
    expect(listed.stdout.trim().split('\n')).toHaveLength(2);
    expect(listed.stdout).toContain('futile retry (2)');
  });

  test('a request whose reserve exceeds the whole limit gets 429 at once, Retry-After 0, saying it can never fit', async () => {
    const proc = await serveExample('ai', [TOKENS(1000, '1m')]);
    const error = await openai(proc)
      .chat.completions.create(chat(5000))
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(OpenAI.RateLimitError);
    const rateError = error as InstanceType<typeof OpenAI.RateLimitError>;
    expect(rateError.code).toBe('rate_limit_exceeded');
    expect(rateError.headers.get('retry-after')).toBe('0');
    expect(rateError.message).toMatch(
      /Request too large on tokens per 1m: Limit 1000, Requested 5008\. It can never fit/,
    );
    expect((await usage(proc)).meters.tokens?.used).toBe(0);
  });

  test('a stream settles from the usage it carried (stream_options.include_usage)', async () => {
    const proc = await serveExample('ai');
    const stream = await openai(proc).chat.completions.create({
      ...chat(100),
      stream: true,
      stream_options: { include_usage: true },
    });
    let text = '';
    let carried: OpenAI.CompletionUsage | undefined;
    for await (const chunk of stream) {
      text += chunk.choices[0]?.delta.content ?? '';
      if (chunk.usage) carried = chunk.usage;
    }
    expect(text).toBe('Hello from the mock.');
    const prompt = Math.ceil(JSON.stringify(chat(0).messages).length / 4);
    expect(carried).toEqual({ prompt_tokens: prompt, completion_tokens: 4, total_tokens: prompt + 4 });
    await expect.poll(async () => (await usage(proc)).meters.tokens?.used).toBe(prompt + 4);
  });
});

describe('openai against a Responses endpoint', () => {
  const dir = useTempDir('mockapi-responses-');
  const KEY = 'sk-proj-mockapiResponses00000000000001';
  test('a Responses stream settles the tokens meter from the usage of response.completed', async () => {
    const config = await writeConfig(
      dir.path,
      [
        `apiKey: ${KEY}`,
        'server: { basePath: /v1 }',
        'limits:',
        '  meters:',
        '    tokens: { limit: 1000, window: 1m }',
        'limitHeaders: openai',
        'endpoints:',
        '  - method: POST',
        '    path: /responses',
        '    cost:',
        '      tokens: { reserve: "${body.max_output_tokens ?? 256}", settle: "${response.body.usage.total_tokens}" }',
        '    response:',
        '      stream: { preset: openai-responses, text: "Hello from the mock.", gap: 0 }',
      ].join('\n'),
    );
    const proc = await startServe(['-c', config, '--no-state', '--no-watch', '--log', 'off']);
    const client = new OpenAI({ apiKey: KEY, baseURL: `${proc.url}/v1`, maxRetries: 0 });
    const stream = await client.responses.create({
      model: 'gpt-4o-mini',
      input: 'Hi',
      max_output_tokens: 500,
      stream: true,
    });
    let completed: OpenAI.Responses.ResponseUsage | undefined;
    for await (const event of stream) if (event.type === 'response.completed') completed = event.response.usage;
    expect(completed?.output_tokens).toBe(4);
    // The reserve of 500 corrected to what the stream said it used.
    await expect.poll(async () => (await usage(proc)).meters.tokens?.used).toBe(completed!.total_tokens);
  });
});

describe('@anthropic-ai/sdk against an Anthropic-shaped config', () => {
  const dir = useTempDir('mockapi-anthropic-');
  const KEY = 'sk-ant-api03-mockapi000000000000000001';
  async function serveAnthropic(
    outputLimit: number,
    outputWindow = '1m',
    budget: string[] = [],
  ): Promise<ServeProcess> {
    const config = await writeConfig(
      dir.path,
      [
        `apiKey: ${KEY}`,
        'server: { basePath: /v1 }',
        // Anthropic's SDK (1.14) sends the key as a Bearer token; the API also takes X-Api-Key.
        'auth: { accept: [x-api-key, bearer] }',
        'limits:',
        '  rateLimit: { requests: 50, window: 1m }',
        '  meters:',
        '    input_tokens: { limit: 40000, window: 1m }',
        `    output_tokens: { limit: ${outputLimit}, window: ${outputWindow} }`,
        ...budget,
        'limitHeaders: anthropic',
        'errors:',
        '  rateLimited:',
        '    body: { type: error, error: { type: rate_limit_error, message: "${error.meter.message ?? \'Number of requests has exceeded your rate limit\'}" } }',
        'endpoints:',
        '  - method: POST',
        '    path: /messages',
        '    cost:',
        '      input_tokens: { reserve: "${len(json(body.messages)) / 4}", settle: "${response.body.usage.input_tokens}" }',
        '      output_tokens: { reserve: "${body.max_tokens}", settle: "${response.body.usage.output_tokens}" }',
        ...(budget.length === 0 ? [] : ['      credits: "${response.body.usage.output_tokens}"']),
        '    responses:',
        '      - name: stream',
        '        when: { body.stream: true }',
        '        stream: { preset: anthropic, text: "Hello from the mock.", gap: 0 }',
        '      - name: message',
        '        body:',
        '          id: msg_01',
        '          type: message',
        '          role: assistant',
        '          model: "${body.model}"',
        '          content: [{ type: text, text: Hello from the mock. }]',
        '          stop_reason: end_turn',
        '          stop_sequence: null',
        '          usage: { input_tokens: 9, output_tokens: 6 }',
      ].join('\n'),
    );
    return startServe(['-c', config, '--no-state', '--no-watch', '--log', 'off']);
  }
  const params = (max_tokens: number) => ({
    model: 'mock-model',
    max_tokens,
    messages: [{ role: 'user' as const, content: 'Hi' }],
  });

  test('a call succeeds and exposes the anthropic-ratelimit-* headers; a full output-tokens window raises its RateLimitError', async () => {
    const proc = await serveAnthropic(1000);
    const client = new Anthropic({ apiKey: KEY, baseURL: proc.url, maxRetries: 0 });
    const { data, response } = await client.messages.create(params(900)).withResponse();
    expect(data.content[0]).toMatchObject({ type: 'text', text: 'Hello from the mock.' });
    expect(response.headers.get('anthropic-ratelimit-requests-limit')).toBe('50');
    expect(response.headers.get('anthropic-ratelimit-requests-remaining')).toBe('49');
    expect(response.headers.get('anthropic-ratelimit-requests-reset')).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/);
    expect(response.headers.get('anthropic-ratelimit-output-tokens-limit')).toBe('1000');
    expect(response.headers.get('anthropic-ratelimit-output-tokens-remaining')).toBe('100');
    expect(response.headers.get('anthropic-ratelimit-input-tokens-limit')).toBe('40000');
    expect(response.headers.get('anthropic-ratelimit-tokens-remaining')).toBe('100');
    // Settled at 6 output tokens: 6 + 995 is over 1000.
    const error = await client.messages.create(params(995)).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(Anthropic.RateLimitError);
    const rateError = error as InstanceType<typeof Anthropic.RateLimitError>;
    expect(rateError.status).toBe(429);
    expect(rateError.error).toMatchObject({ type: 'error', error: { type: 'rate_limit_error' } });
    expect(rateError.headers?.get('anthropic-ratelimit-output-tokens-remaining')).toBe('994');
    expect(Number(rateError.headers?.get('retry-after'))).toBeGreaterThan(50);
    expect(rateError.headers?.get('anthropic-ratelimit-output-tokens-reset')).toMatch(
      /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/,
    );
  });

  test("its retries wait as retry-after says (no retry-after-ms in Anthropic's headers): the retry is admitted once the window freed", async () => {
    const proc = await serveAnthropic(1000, '3s');
    // One retry: its default backoff (at most 0.5 s) would come back to a window still full.
    const client = new Anthropic({ apiKey: KEY, baseURL: proc.url, maxRetries: 1 });
    await client.messages.create(params(900));
    // Settled at 6 output tokens: 995 more fit once those 6 leave the window, 3 s after the first (a window
    // long enough for the second call to land in it on a loaded machine).
    const { data } = await client.messages.create(params(995)).withResponse();
    expect(data.usage).toEqual({ input_tokens: 9, output_tokens: 6 });
    const requests = (await journal(proc, 3)) as Array<Entry & { responseHeaders: Record<string, string> }>;
    expect(requests.map((e) => e.status)).toEqual([200, 429, 200]);
    const refused = requests[1]!.responseHeaders;
    expect(refused['retry-after-ms']).toBeUndefined();
    const wait = Number(refused['retry-after']);
    expect(wait).toBeGreaterThanOrEqual(1);
    expect(refused['anthropic-ratelimit-output-tokens-remaining']).toBe('994');
    expect(gapMs(requests[1]!, requests[2]!)).toBeGreaterThanOrEqual(wait * 1000 - 5);
    expect(gapMs(requests[0]!, requests[2]!)).toBeGreaterThanOrEqual(2995);
  });

  test('a spent budget raises its RateLimitError at every retry: the retries are futile, and noted so', async () => {
    const proc = await serveAnthropic(1000, '1m', ['    credits: { limit: 10, window: total }']);
    const set = await fetch(`${proc.url}/__mockapi/usage`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ meter: 'credits', value: 10 }),
    });
    expect(set.status).toBe(200);
    const error = await new Anthropic({ apiKey: KEY, baseURL: proc.url, maxRetries: 2 }).messages
      .create(params(10))
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(Anthropic.RateLimitError);
    expect((error as InstanceType<typeof Anthropic.RateLimitError>).headers?.get('retry-after')).toBeNull();
    const entries = await journal(proc, 3);
    expect(entries.map((e) => [e.status, e.step])).toEqual([
      [429, 'quota'],
      [429, 'quota'],
      [429, 'quota'],
    ]);
    expect(entries.map((e) => /futile retry \(\d\)/.exec(e.notes.join('; '))?.[0])).toEqual([
      undefined,
      'futile retry (1)',
      'futile retry (2)',
    ]);
    expect(entries[0]!.notes).toContain('credits spent: 10 of 10 credits in total');
  });

  test('a stream settles both token meters from the usage its events carried (message_start, message_delta)', async () => {
    const proc = await serveAnthropic(1000);
    const client = new Anthropic({ apiKey: KEY, baseURL: proc.url, maxRetries: 0 });
    const stream = client.messages.stream(params(500));
    let text = '';
    stream.on('text', (delta) => (text += delta));
    const message = await stream.finalMessage();
    expect(text).toBe('Hello from the mock.');
    expect(message.usage.input_tokens).toBe(Math.max(1, Math.ceil(JSON.stringify(params(500).messages).length / 4)));
    expect(message.usage.output_tokens).toBe(4);
    // The reserves (8 and 500) corrected to what the stream said it used.
    await expect.poll(async () => (await usage(proc)).meters.output_tokens?.used).toBe(message.usage.output_tokens);
    expect((await usage(proc)).meters.input_tokens?.used).toBe(message.usage.input_tokens);
  });
});
