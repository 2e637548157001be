// Timings of one big config, in a fresh process (cold JIT, as a user meets them). Prints one JSON
// line. Run by bench/run.js:
//   node bench/config-timing.js load <file>     → {importMs, loadMs, compileMs}
//   node bench/config-timing.js reload <file> N → {startMs, reloadMs: [N times]}
// `reload` starts the server in-process (startMockServer, no watcher), then N times changes the
// file's `project:` line and times `server.reload()` until it resolves with `changed: true`.
import { readFile, writeFile } from 'node:fs/promises';
import { pathToFileURL } from 'node:url';

const [mode, file, times = '3'] = process.argv.slice(2);
// The dist/ of the build measured (bench/run.js --cli), else this checkout's.
const dist = process.env.MOCKAPI_BENCH_DIST === undefined ? new URL('../dist/', import.meta.url) : pathToFileURL(`${process.env.MOCKAPI_BENCH_DIST}/`);

if (mode === 'load') {
  let t = performance.now();
  const { loadConfig } = await import(new URL('config/load.js', dist).href);
  // answer/compile.js since the layout of src/ by subsystem; compile.js in builds before it (--compare).
  const { compileConfig } = await import(new URL('answer/compile.js', dist).href).catch(() => import(new URL('compile.js', dist).href));
  const importMs = performance.now() - t;
  t = performance.now();
  const loaded = await loadConfig(file);
  const loadMs = performance.now() - t;
  if (!loaded.ok) throw new Error(`invalid config: ${JSON.stringify(loaded.issues.slice(0, 3))}`);
  t = performance.now();
  await compileConfig(loaded.config);
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
} else {
  console.error('usage: node bench/config-timing.js load <file> | reload <file> [times]');
  process.exit(2);
}
