// Timings of one big config, in a fresh process (cold JIT, as a user meets them). Prints one JSON
// line. Run by bench/run.js:
//   node bench/config-timing.js load <file>     → {importMs, loadMs, compileMs}
//   node bench/config-timing.js reload <file> N → {startMs, reloadMs: [N times]}
//   node bench/config-timing.js phases <file> N → {phases: {yaml, schema, rules, build, compile, diff}} (median ms)
// `reload` starts the server in-process (startMockServer, no watcher), then N times changes the
// file's `project:` line and times `server.reload()` until it resolves with `changed: true`.
import { readFile, writeFile } from 'node:fs/promises';
import { pathToFileURL } from 'node:url';

const [mode, file, times = '3'] = process.argv.slice(2);
// The dist/ of the build measured (bench/run.js --cli), else this checkout's.
const dist =
  process.env.MOCKAPI_BENCH_DIST === undefined
    ? new URL('../dist/', import.meta.url)
    : pathToFileURL(`${process.env.MOCKAPI_BENCH_DIST}/`);

if (mode === 'load') {
  let t = performance.now();
  const { loadConfig } = await import(new URL('config/load.js', dist).href);
  // answer/compile.js since the layout of src/ by subsystem; compile.js in builds before it (--compare).
  const { compileConfig } = await import(new URL('answer/compile.js', dist).href).catch(
    () => import(new URL('compile.js', dist).href),
  );
  // The capabilities' compile steps (src/answer-parts.ts); a build before them has none to give.
  const { ANSWER_PARTS } = await import(new URL('answer-parts.js', dist).href).catch(() => ({}));
  const importMs = performance.now() - t;
  t = performance.now();
  const loaded = await loadConfig(file);
  const loadMs = performance.now() - t;
  if (!loaded.ok) throw new Error(`invalid config: ${JSON.stringify(loaded.issues.slice(0, 3))}`);
  t = performance.now();
  await compileConfig(loaded.config, undefined, { parts: ANSWER_PARTS });
  const compileMs = performance.now() - t;
  console.log(JSON.stringify({ importMs, loadMs, compileMs, endpoints: loaded.config.endpoints.length }));
} else if (mode === 'reload') {
  const { startMockServer } = await import(new URL('index.js', dist).href);
  let t = performance.now();
  const server = await startMockServer({ config: file, port: 0, watch: false, state: false, log: 'off' });
  const startMs = performance.now() - t;
  const original = await readFile(file, 'utf8');
  const reloadMs = [];
  try {
    for (let i = 0; i < Number(times); i++) {
      await writeFile(file, original.replace(/^project: .*$/m, `project: bench-reload-${process.pid}-${i}`));
      t = performance.now();
      const result = await server.reload();
      reloadMs.push(performance.now() - t);
      if (!result.changed) throw new Error(`reload did not apply: ${JSON.stringify(result.issues.slice(0, 3))}`);
    }
  } finally {
    await writeFile(file, original);
    await server.close();
  }
  console.log(JSON.stringify({ startMs, reloadMs }));
} else if (mode === 'phases') {
  // Where a reload's time goes: the steps of reload() one by one (as config/load.js and
  // answer/config-runtime.js run them), each reload against the config loaded before it.
  const { readYamlFast } = await import(new URL('config/fast-read.js', dist).href);
  const { validateSchema } = await import(new URL('config/schema-validator.generated.js', dist).href);
  const { checkRules } = await import(new URL('config/rules.js', dist).href);
  const { createIssueList } = await import(new URL('config/issues.js', dist).href);
  const { objectLocator } = await import(new URL('config/locate.js', dist).href);
  const { buildConfig } = await import(new URL('config/build.js', dist).href);
  const { describeConfigChange } = await import(new URL('config/diff.js', dist).href);
  const { loadConfig } = await import(new URL('config/load.js', dist).href);
  const { compileConfig } = await import(new URL('answer/compile.js', dist).href);
  const { ANSWER_PARTS } = await import(new URL('answer-parts.js', dist).href).catch(() => ({}));
  // Builds before the endpoint reuse (--compare) have no endpoint-reuse.js: every endpoint is then checked.
  const { checkedEndpoints = () => undefined, passesSchema } = await import(
    new URL('config/endpoint-reuse.js', dist).href
  ).catch(() => ({}));
  // Builds before the read reuse have no fast-read-reuse.js: every reload then reads the whole text.
  const reuse = await import(new URL('config/fast-read-reuse.js', dist).href).catch(() => undefined);
  const { dirname, resolve } = await import('node:path');
  const absolute = resolve(file);
  const original = await readFile(absolute, 'utf8');
  let memo = reuse?.memoOfRead(original, readYamlFast(original, 3));
  const loaded = await loadConfig(absolute);
  if (!loaded.ok) throw new Error(`invalid config: ${JSON.stringify(loaded.issues.slice(0, 3))}`);
  let compiled = await compileConfig(loaded.config, undefined, { parts: ANSWER_PARTS });
  const phases = { yaml: [], schema: [], rules: [], build: [], compile: [], diff: [] };
  const timed = async (name, step) => {
    const t0 = performance.now();
    const value = await step();
    phases[name].push(performance.now() - t0);
    return value;
  };
  for (let i = 0; i < Number(times); i++) {
    const text = original.replace(/^project: .*$/m, `project: bench-phases-${process.pid}-${i}`);
    // As a reload reads: the endpoints whose lines did not change are taken from the read before.
    const fast = await timed('yaml', () =>
      memo === undefined ? readYamlFast(text) : reuse.readYamlReusing(text, memo),
    );
    if (fast === undefined) throw new Error('the fast reader declined the config');
    if (memo !== undefined) memo = fast.memo;
    const issues = createIssueList(absolute, objectLocator);
    // As a reload checks: the endpoint data that passed before is left out (builds that have passesSchema).
    await timed('schema', () =>
      passesSchema === undefined ? validateSchema(fast.data) : passesSchema(fast.data, validateSchema, true),
    );
    const checked = checkedEndpoints(compiled.config, dirname(absolute));
    await timed('rules', () =>
      checkRules(fast.data, { issues, dir: dirname(absolute), ...(checked === undefined ? {} : { checked }) }),
    );
    if (issues.issues.length > 0) throw new Error(`invalid config: ${JSON.stringify(issues.issues.slice(0, 3))}`);
    // buildConfig and compileConfig take the config served before (endpoint reuse), where the build has it.
    const config = await timed('build', () =>
      buildConfig(fast.data, dirname(absolute), absolute, `phases-${i}`, compiled.config),
    );
    const next = await timed('compile', () => compileConfig(config, compiled, { parts: ANSWER_PARTS }));
    await timed('diff', () => describeConfigChange(compiled.config, next.config));
    compiled = next;
  }
  const median = (v) => [...v].sort((a, b) => a - b)[Math.floor(v.length / 2)];
  console.log(JSON.stringify({ phases: Object.fromEntries(Object.entries(phases).map(([k, v]) => [k, median(v)])) }));
} else {
  console.error('usage: node bench/config-timing.js load <file> | reload <file> [times] | phases <file> [times]');
  process.exit(2);
}
