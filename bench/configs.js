// The configs the benchmarks load (bench/run.js, bench/micro.js): one endpoint, or 10,000.

export const API_KEY = 'mk_bench0000000000000000000000000000';
const BODY = { id: 42, name: 'Ada Lovelace', email: 'ada@example.com', roles: ['admin', 'dev'], active: true };
export const BODY_TEXT = JSON.stringify(BODY);
// Large enough never to refuse during a run (stated in BENCHMARKS.md): at most 100,000 requests in
// any 100 ms would need 1,000,000 req/s; the quota allows 10^12 a month.
const LIMITS = `limits:
  rateLimit:
    requests: 100000
    window: 100ms
  monthlyQuota: 1000000000000
`;
const ENDPOINT_COUNT = 10_000;
export const BIG_TARGET = 5000; // GET /r5000/items/:id, in the middle of the file

export function oneEndpointYaml() {
  return `project: bench
apiKey: ${API_KEY}
${LIMITS}endpoints:
  - method: GET
    path: /users/:id
    response:
      body: ${BODY_TEXT}
`;
}

/** The ten keys of `keys:` in the `keys` scenario, all on one plan: its requests go round them. */
export const KEYED_KEYS = Array.from({ length: 10 }, (_, i) => `mk_benchKeyed${i}_0123456789abcdefghij`);

/** One endpoint with a limit of its own (per key), and the ten keys of {@link KEYED_KEYS} on a plan. */
export function keyedYaml() {
  const keys = KEYED_KEYS.map((key, i) => [`  - name: key${i}`, `    key: ${key}`, '    plan: pro']).flat();
  return `project: bench-keys
apiKey: ${API_KEY}
keys:
${keys.join('\n')}
plans:
  pro: { rateLimit: { requests: 100000, window: 100ms }, monthlyQuota: 1000000000000 }
${LIMITS}endpoints:
  - method: GET
    path: /users/:id
    limits: { rateLimit: { requests: 100000, window: 100ms } }
    response:
      body: ${BODY_TEXT}
`;
}

/** 10,000 endpoints: even ones `GET /r<i>/items/:id`, odd ones `POST /r<i>/orders`; same body. */
export function manyEndpointsYaml() {
  const lines = [`project: bench-10k`, `apiKey: ${API_KEY}`, LIMITS.trimEnd(), 'endpoints:'];
  for (let i = 0; i < ENDPOINT_COUNT; i++) {
    const even = i % 2 === 0;
    lines.push(
      `  - method: ${even ? 'GET' : 'POST'}`,
      `    path: ${even ? `/r${i}/items/:id` : `/r${i}/orders`}`,
      '    response:',
      ...(even ? [] : ['      status: 201']),
      `      body: ${BODY_TEXT}`,
    );
  }
  return `${lines.join('\n')}\n`;
}

/**
 * The dynamic answers of issue 14 (SPEC §7), one endpoint each: `when` on params and query, a JSON
 * body of five request-derived fields, ten `fake.*` fields with a seed.
 */
export function dynamicYaml() {
  return `project: bench-dynamic
apiKey: ${API_KEY}
seed: 42
${LIMITS}endpoints:
  - method: GET
    path: /when/:id
    responses:
      - { when: { params.id: "7", query.v: "1" }, status: 404, body: { error: not_found } }
      - { when: { params.id: "42", query.v: "2" }, body: ${BODY_TEXT} }
      - { body: { fallback: true } }
  - method: GET
    path: /fields/:id
    response:
      body:
        id: \${int(params.id)}
        name: \${query.name}
        page: \${int(query.page ?? 1)}
        agent: \${headers.x-client}
        greeting: Hello \${query.name}
  - method: GET
    path: /fake/:id
    response:
      body:
        name: \${fake.person.fullName()}
        first: \${fake.person.firstName()}
        last: \${fake.person.lastName()}
        email: \${fake.internet.email()}
        city: \${fake.location.city()}
        street: \${fake.location.streetAddress()}
        company: \${fake.company.name()}
        phone: \${fake.phone.number()}
        uuid: \${fake.string.uuid()}
        age: "\${fake.number.int({ min: 18, max: 90 })}"
`;
}

/** Paths and headers of the dynamic loads, by key. */
export const DYNAMIC_LOADS = {
  when: { path: '/mock/when/42?v=2', headers: {} },
  fields: { path: '/mock/fields/42?name=Ada&page=3', headers: { 'x-client': 'bench' } },
  fake: { path: '/mock/fake/42', headers: {} },
};

const METERS_BODY = {
  id: 'chatcmpl-1',
  object: 'chat.completion',
  choices: [{ index: 0, message: { role: 'assistant', content: 'Hello from the mock.' }, finish_reason: 'stop' }],
  usage: { prompt_tokens: 12, completion_tokens: 5, total_tokens: 17 },
};
export const METERS_BODY_TEXT = JSON.stringify(METERS_BODY);

/**
 * The meters scenario's endpoint without meters, its answers carrying `headers` (name → value) as
 * static response headers: what sending the metered answer's extra headers costs alone, with no
 * meter counted (bench/scenarios/meters.js's reference figure).
 */
export function meterHeadersYaml(headers) {
  const lines = Object.entries(headers).map(([name, value]) => `        ${name}: ${JSON.stringify(value)}\n`);
  return metersYaml(false)
    .replace('bench-meters-off', 'bench-meters-headers')
    .replace('    response:\n', `    response:\n      headers:\n${lines.join('')}`);
}

/** The meters scenario's endpoint (bench/scenarios/meters.js, bench/meters-cpu.js, bench/micro.js), with or without its two meters and cost (limits large enough never to refuse during a run). */
export function metersYaml(metered) {
  const meters = metered
    ? '  meters:\n    tokens: { limit: 9000000000, window: 1m }\n    spend: { limit: 9000000000, window: month }\n'
    : '';
  const cost = metered
    ? '    cost:\n      tokens: { reserve: 300, settle: "${response.body.usage.total_tokens}" }\n      spend: "${response.body.usage.total_tokens * 0.000002}"\n'
    : '';
  return `project: bench-meters-${metered ? 'on' : 'off'}
apiKey: ${API_KEY}
limits:
  rateLimit: { requests: 100000, window: 100ms }
  monthlyQuota: 1000000000000
${meters}endpoints:
  - method: GET
    path: /users/:id
${cost}    response:
      body: ${METERS_BODY_TEXT}
`;
}

/** The resources scenario's create body: a Stripe-style form (bench/scenarios/resources.js, bench/resources-cpu.js). */
export const RESOURCES_CREATE_BODY = 'email=jenny.rosen%40example.com&name=Jenny%20Rosen&metadata[plan]=pro';

/** The resources scenario's config: a customers collection with one seed object, and an events collection. */
export function resourcesYaml() {
  return `project: bench-resources
apiKey: ${API_KEY}
seed: 1
server:
  basePath: /
limits:
  rateLimit: { requests: 100000, window: 100ms }
  monthlyQuota: 1000000000000
idempotency: false
resources:
  customers:
    style: stripe
    path: /v1/customers
    fields: { object: customer, created: 1767225600, email: null, name: null, balance: 0, livemode: false, metadata: {} }
    seed:
      - { id: cus_bench, email: ada@example.com, name: Ada Lovelace }
  events:
    style: stripe
    path: /v1/events
    fields: { object: event }
`;
}
