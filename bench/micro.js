#!/usr/bin/env node
// Nanoseconds per call of each step of the request pipeline, in a tight loop (JIT-warm, cache-hot:
// a floor, not what a request pays). For profiling work; not part of `npm run bench`'s verdicts.
//   npm run build && node bench/micro.js
const dist = new URL('../dist/', import.meta.url);
const load = (path) => import(new URL(path, dist).href);
const { checkAuth, createKeyMatcher } = await load('pipeline/auth.js');
const { createGate } = await load('pipeline/limits.js');
const { createMemoryUsageStore } = await load('state/usage-store.js');
const { createRouter } = await load('pipeline/match.js');
const { readRequestPath } = await load('http/request-path.js');
const { createFailureSource } = await load('pipeline/failure.js');

// `node bench/micro.js dynamic` runs only the dynamic answers' handler calls (issue 14).
const only = process.argv[2];
function bench(name, fn, n = 1_000_000) {
  if (only !== undefined && !name.startsWith(only)) return;
  for (let i = 0; i < n / 5; i++) fn(i);
  const started = process.hrtime.bigint();
  const cpu = process.cpuUsage();
  for (let i = 0; i < n; i++) fn(i);
  const ns = Number(process.hrtime.bigint() - started) / n;
  // CPU time too: on a shared machine it is steadier than wall time (no time spent descheduled).
  const used = process.cpuUsage(cpu);
  const cpuNs = ((used.user + used.system) * 1000) / n;
  process.stdout.write(`${name.padEnd(34)} ${ns.toFixed(1).padStart(7)} ns  (cpu ${cpuNs.toFixed(1)} ns)\n`);
}

const { API_KEY: KEY, oneEndpointYaml, dynamicYaml, DYNAMIC_LOADS, metersYaml } = await import('./configs.js');
const matcher = createKeyMatcher(KEY);
bench('checkAuth (X-API-Key)', () => checkAuth({ 'x-api-key': KEY }, matcher));
bench('checkAuth (Bearer)', () => checkAuth({ authorization: `Bearer ${KEY}` }, matcher));

// The bench's limits (100,000 per 100 ms, quota 10^12) at 100 calls per simulated ms: never refused.
const gate = createGate(createMemoryUsageStore());
const limits = { rateLimit: { requests: 100_000, windowMs: 100 }, monthlyQuota: 1e12 };
const start = Date.now();
bench('limit gate admit (rate + quota)', (i) => gate.admit(limits, start + Math.floor(i / 100)));

const one = createRouter([{ method: 'GET', path: '/users/:id' }]);
bench('router, 1 endpoint (param)', () => one.match('GET', '/users/42'));
const many = [];
for (let i = 0; i < 10_000; i++)
  many.push(i % 2 === 0 ? { method: 'GET', path: `/r${i}/items/:id` } : { method: 'POST', path: `/r${i}/orders` });
const big = createRouter(many);
bench('router, 10k endpoints (param)', () => big.match('GET', '/r5000/items/42'));

bench('readRequestPath', () => readRequestPath('/mock/users/42?x=1'));
const failures = createFailureSource(1);
bench('failure draw (failRate 0.1)', () => failures.shouldFail('GET /users/:id', 0.1));

// The whole handler: a request for GET /mock/users/42 with a valid key, on 50 "connections",
// against the bench's one-endpoint config, through createRequestHandler with fake request and
// response objects and a clock that advances 10 µs a call (the bench's limits never refuse).
// Node's own HTTP work is not in it.
const { loadConfig } = await load('config/load.js');
const { compileConfig } = await load('answer/compile.js');
// The capabilities' compile steps (src/answer-parts.ts); a build before them has none to give.
const { ANSWER_PARTS } = await load('answer-parts.js').catch(() => ({}));
const { createRequestHandler } = await load('http/handler.js');
const { createReply } = await load('http/reply.js');
const { requestSteps } = await load('request-steps.js');
const { createResilienceSource } = await load('pipeline/resilience.js');
const { createRetryAfterWatch } = await load('control/retry-after-watch.js');
const { createClientTracker } = await load('control/early-retries.js');
const { silentLogger } = await load('logger.js');
const { createAnswerState } = await load('answer/answer-state.js');
const { createJournal } = await load('control/journal.js');
const { createSessionRegistry } = await load('sessions/registry.js');
// Answers are ended at the end of the loop turn (http/write-batch.ts); these loops never yield, so
// each call flushes its own answer at once.
const { flushWrites } = await load('http/write-batch.js');
const { mkdtemp, rm, writeFile } = await import('node:fs/promises');
const { join } = await import('node:path');
const { tmpdir } = await import('node:os');
const dir = await mkdtemp(join(tmpdir(), 'mockapi-micro-'));
const file = join(dir, 'mockapi.yaml');
/** The bench's config from its YAML text, loaded and compiled. */
async function compiledOf(yaml) {
  await writeFile(file, yaml);
  const loaded = await loadConfig(file);
  if (!loaded.ok) throw new Error(JSON.stringify(loaded.issues));
  return { loaded, compiled: await compileConfig(loaded.config, undefined, { parts: ANSWER_PARTS }) };
}
const { loaded, compiled } = await compiledOf(oneEndpointYaml());
const dynamicConfig = await compiledOf(dynamicYaml());
// The one-endpoint config with `server.headers`: a fixed one, and a request id made per request.
const withServerHeaders = (headers) =>
  oneEndpointYaml().replace('project: bench\n', `project: bench\nserver:\n  headers:\n${headers}`);
const fixedHeaderConfig = await compiledOf(withServerHeaders('    api-version: "2024-06-20"\n'));
const requestIdConfig = await compiledOf(withServerHeaders('    x-request-id: "req_${randomHex(32)}"\n'));
const metersOffConfig = await compiledOf(metersYaml(false));
const metersOnConfig = await compiledOf(metersYaml(true));
await rm(dir, { recursive: true, force: true });
let fakeNow = Date.now();
const fractionalClock = () => (fakeNow += 0.01);
const clock = fractionalClock;
// Whole milliseconds, as the server's clock (Date.now): a meter's window keeps one slot per millisecond.
const wholeClock = () => Math.floor((fakeNow += 0.01));
/**
 * The handler over the bench's config, with a journal of `journal` entries (1000 is the default; 0 =
 * off), and named sessions (made in memory, each with the same journal size) beside the default one.
 */
const handlerWith = (journalSize, config = { loaded, compiled }, clock = fractionalClock) => {
  const requestLog = { enabled: false, log() {}, flush() {}, close: async () => {} };
  const journal = createJournal(journalSize, clock);
  const answers = createAnswerState(config.loaded.config);
  const reply = createReply({
    requestLog,
    logger: silentLogger,
    retryAfters: createRetryAfterWatch(createClientTracker(), clock),
  });
  const holder = { current: config.compiled };
  const sessions = createSessionRegistry({
    shared: {
      runtime: { holder, reload: async () => ({ changed: false, issues: [] }), onSwap() {} },
      logger: silentLogger,
      clients: createClientTracker(),
      clock,
      virtualStart: undefined,
      clearStubs: () => 0,
    },
    config: () => holder.current.config,
    dropped() {},
    busy: () => false,
  });
  const scope = {
    id: '',
    journal,
    clock,
    answers,
    limits: createGate(createMemoryUsageStore()),
    keyLimits: undefined,
    key: undefined,
  };
  const steps = requestSteps({
    reply,
    sessions,
    failures: createFailureSource(1),
    resilience: createResilienceSource(),
  });
  return createRequestHandler({ holder, reply, requestLog, journal, steps, scope });
};
const handle = handlerWith(1000);
const handleNoJournal = handlerWith(0);
let lastStatus = 0;
const res = {
  destroyed: false,
  headersSent: false,
  writeHead(status) {
    lastStatus = status;
  },
  end() {},
  once() {},
};
const sockets = Array.from({ length: 50 }, () => ({}));
const requests = Array.from({ length: 1000 }, (_, i) => ({
  url: '/mock/users/42',
  method: 'GET',
  httpVersion: '1.1',
  headers: { host: '127.0.0.1:4010', 'x-api-key': KEY },
  rawHeaders: ['Host', '127.0.0.1:4010', 'x-api-key', KEY],
  socket: sockets[i % 50],
}));
bench(
  'whole handler (200, 1 endpoint), journal 1000',
  (i) => (handle(requests[i % 1000], res), flushWrites()),
  2_000_000,
);
if (only === undefined && lastStatus !== 200) throw new Error(`the handler answered ${lastStatus}`);
bench(
  'whole handler (200, 1 endpoint), journal 0',
  (i) => (handleNoJournal(requests[i % 1000], res), flushWrites()),
  2_000_000,
);
if (only === undefined && lastStatus !== 200) throw new Error(`the handler answered ${lastStatus}`);
// The same request in a named session (issue 42): by its header, and by its path prefix (a fresh
// request object each call: the prefix is taken off its url).
const named = Array.from({ length: 1000 }, (_, i) => ({
  url: '/mock/users/42',
  method: 'GET',
  httpVersion: '1.1',
  headers: { host: '127.0.0.1:4010', 'x-api-key': KEY, 'x-mockapi-session': 'bench' },
  rawHeaders: ['Host', '127.0.0.1:4010', 'x-api-key', KEY, 'x-mockapi-session', 'bench'],
  socket: sockets[i % 50],
}));
bench('whole handler, named session (header)', (i) => (handle(named[i % 1000], res), flushWrites()), 2_000_000);
if (only === undefined && lastStatus !== 200) throw new Error(`the handler answered ${lastStatus}`);
bench(
  'whole handler, named session (prefix)',
  (i) => (handle({ ...requests[i % 1000], url: '/__session/bench/mock/users/42' }, res), flushWrites()),
  2_000_000,
);
if (only === undefined && lastStatus !== 200) throw new Error(`the handler answered ${lastStatus}`);
bench(
  'whole handler (200, 1 endpoint), journal 1000, again',
  (i) => (handle({ ...requests[i % 1000] }, res), flushWrites()),
  2_000_000,
);
const handleFixedHeader = handlerWith(0, fixedHeaderConfig);
bench(
  'whole handler, journal 0, server.headers fixed',
  (i) => (handleFixedHeader(requests[i % 1000], res), flushWrites()),
  2_000_000,
);
const handleRequestId = handlerWith(0, requestIdConfig);
bench(
  'whole handler, journal 0, request id',
  (i) => (handleRequestId(requests[i % 1000], res), flushWrites()),
  2_000_000,
);

// Meters (issue 41): the meters scenario's endpoint (bench/scenarios/meters.js) with its two meters
// and a settle, against the same endpoint without meters; journal off.
const metersOff = handlerWith(0, metersOffConfig, wholeClock);
const metersOn = handlerWith(0, metersOnConfig, wholeClock);
for (const [name, handle] of [
  ['meters handler: no meters', metersOff],
  ['meters handler: two meters and a settle', metersOn],
]) {
  lastStatus = 0;
  bench(name, (i) => (handle(requests[i % 1000], res), flushWrites()), 1_000_000);
  if ((only === undefined || name.startsWith(only)) && lastStatus !== 200)
    throw new Error(`${name}: the handler answered ${lastStatus}`);
}

// The dynamic answers of issue 14, one handler call per request, journal off (its cost is above).
const handleDynamic = handlerWith(0, dynamicConfig);
for (const [key, load] of Object.entries(DYNAMIC_LOADS)) {
  const list = Array.from({ length: 1000 }, (_, i) => ({
    url: load.path,
    method: 'GET',
    httpVersion: '1.1',
    headers: { host: '127.0.0.1:4010', 'x-api-key': KEY, ...load.headers },
    rawHeaders: ['Host', '127.0.0.1:4010', 'x-api-key', KEY, ...Object.entries(load.headers).flat()],
    socket: sockets[i % 50],
  }));
  bench(
    `dynamic handler: ${key}`,
    (i) => (handleDynamic(list[i % 1000], res), flushWrites()),
    key === 'fake' ? 200_000 : 1_000_000,
  );
  if ((only === undefined || `dynamic handler: ${key}`.startsWith(only)) && lastStatus !== 200)
    throw new Error(`the handler answered ${lastStatus} for ${key}`);
}
