// Instructions per request of the dynamic scenario's servers, counted by valgrind's callgrind:
// figures that do not move with the machine's load, for telling a per-request cost change from a
// noisy ratio (bench/scenarios/dynamic.js on a shared 2-core machine). The server (the CLI under
// `valgrind --tool=callgrind`, `--no-state --log off --no-watch`) takes `--warm` requests (default
// 20,000) over 8 keep-alive connections, then its counts are zeroed, then `--n` more (default
// 10,000) are counted. Not part of `npm run bench`; Linux with valgrind only; each figure takes
// minutes (the server runs ~50× slower under valgrind).
//
//   node bench/instructions.js [--cli <bin/mockapi.js>] [--compare <other bin/mockapi.js>]
//                              [--load static,when,root,meters-off,meters-on] [--warm 20000] [--n 10000] [--keep <dir>]
//                              [--config <file> …: configs of your own instead of --load, asked GET /mock/users/42]
//
// Each figure is split by where the instructions went, from callgrind's own costs per function:
// `js` (V8's generated code: unnamed addresses), `builtins` (V8's Builtins_*), `native` (Node, libuv,
// llhttp, V8's runtime), `gc` and `compiler` (TurboFan, on its threads). The compiler's and the GC's
// shares are not steady per request under valgrind: V8's time-driven work (the memory reducer's
// GCs, bytecode flushed and compiled again) runs ~50× more often per request than at full speed,
// so `total` moved 80k–131k between runs of one build and config (2026-11-30). `mutator` (js +
// builtins + native) is the figure to compare across builds; it moved ±4% between runs.
import { execFileSync, spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { Agent, request } from 'node:http';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { API_KEY, DYNAMIC_LOADS, dynamicYaml, metersYaml, oneEndpointYaml } from './configs.js';

const { values } = parseArgs({
  options: {
    cli: { type: 'string' },
    compare: { type: 'string' },
    load: { type: 'string', default: 'static,when,root' },
    warm: { type: 'string', default: '20000' },
    n: { type: 'string', default: '10000' },
    keep: { type: 'string' },
    config: { type: 'string', multiple: true },
  },
});
const CLIS = [resolve(values.cli ?? new URL('../bin/mockapi.js', import.meta.url).pathname)];
if (values.compare !== undefined) CLIS.push(resolve(values.compare));
const WARM = Number(values.warm);
const N = Number(values.n);
const CONNECTIONS = 8;

const dir = mkdtempSync(join(tmpdir(), 'mockapi-instructions-'));
const outDir = values.keep ?? dir;
mkdirSync(outDir, { recursive: true });
const files = {
  one: join(dir, 'one.yaml'),
  dynamic: join(dir, 'dynamic.yaml'),
  root: join(dir, 'root.yaml'),
  metersOff: join(dir, 'meters-off.yaml'),
  metersOn: join(dir, 'meters-on.yaml'),
};
writeFileSync(files.one, oneEndpointYaml());
writeFileSync(files.dynamic, dynamicYaml());
writeFileSync(files.metersOff, metersYaml(false));
writeFileSync(files.metersOn, metersYaml(true));
writeFileSync(files.root, oneEndpointYaml().replace('apiKey:', 'server:\n  basePath: /\napiKey:'));
// The dynamic scenario's loads (bench/scenarios/dynamic.js): its config file and request.
const LOADS = {
  static: { file: files.one, path: '/mock/users/42', headers: {} },
  when: { file: files.dynamic, ...DYNAMIC_LOADS.when },
  fields: { file: files.dynamic, ...DYNAMIC_LOADS.fields },
  fake: { file: files.dynamic, ...DYNAMIC_LOADS.fake },
  root: { file: files.root, path: '/users/42', headers: {} },
  // The meters scenario's two servers (bench/scenarios/meters.js), one process.
  'meters-off': { file: files.metersOff, path: '/mock/users/42', headers: {} },
  'meters-on': { file: files.metersOn, path: '/mock/users/42', headers: {} },
};

/** Runs one server under callgrind through the warm-up and the counted requests; the counted part's file. */
async function measure(cli, load, out) {
  const args = ['--tool=callgrind', `--callgrind-out-file=${out}`, process.execPath, cli, 'serve', '-c', load.file];
  args.push('--port', '0', '--no-state', '--log', 'off', '--no-watch');
  const server = spawn('valgrind', args, { stdio: ['ignore', 'pipe', 'pipe'] });
  let err = '';
  server.stderr.on('data', (d) => (err += d));
  const url = await new Promise((done, fail) => {
    let text = '';
    server.stdout.on('data', (chunk) => {
      text += chunk;
      const m = /listening on (http:\/\/[^\s]+)/.exec(text);
      if (m !== null) done(m[1].replace(/\/$/, ''));
    });
    server.on('exit', (code) => fail(new Error(`the server exited (${code}): ${text}\n${err}`)));
  });
  const agent = new Agent({ keepAlive: true, maxSockets: CONNECTIONS });
  const headers = { 'x-api-key': API_KEY, ...load.headers };
  const one = () =>
    new Promise((done, fail) => {
      const req = request(`${url}${load.path}`, { agent, headers }, (res) => {
        res.resume();
        res.on('end', () => (res.statusCode === 200 ? done() : fail(new Error(`answer ${res.statusCode}`))));
      });
      req.on('error', fail);
      req.end();
    });
  const send = async (count) => {
    let left = count;
    await Promise.all(
      Array.from({ length: CONNECTIONS }, async () => {
        while (left-- > 0) await one();
      }),
    );
  };
  const control = (flag) => execFileSync('callgrind_control', [flag, String(server.pid)], { stdio: 'ignore' });
  await send(WARM);
  control('-z');
  await send(N);
  control('-d');
  agent.destroy();
  server.removeAllListeners('exit');
  await new Promise((done) => {
    server.once('exit', done);
    server.kill('SIGTERM');
  });
  const prefix = out.slice(out.lastIndexOf('/') + 1);
  const dumps = readdirSync(outDir).filter((f) => f.startsWith(`${prefix}.`));
  return join(outDir, dumps.sort().at(-1));
}

/** A callgrind file's own (exclusive) instructions, added up by the kinds above. */
function kinds(file) {
  const names = new Map();
  const nameOf = (text) => {
    const m = /^\((\d+)\)(?: (.*))?$/.exec(text);
    if (m === null) return text;
    if (m[2] !== undefined) names.set(m[1], m[2]);
    return names.get(m[1]) ?? text;
  };
  const byKind = { js: 0, builtins: 0, native: 0, gc: 0, compiler: 0 };
  let kind = 'native';
  let afterCall = false;
  for (const line of readFileSync(file, 'utf8').split('\n')) {
    if (line.startsWith('fn=')) {
      const name = nameOf(line.slice(3));
      kind = /^0x[0-9a-f]+/.test(name)
        ? 'js'
        : /compiler::|maglev|Zone/.test(name)
          ? 'compiler'
          : /Scaveng|Marking|Mark|Sweep|Evacuat|Heap::|HeapObject::Size|MemoryChunk|RememberedSet|SlotSet|ObjectCache|RootVisitor|ActiveSystemPages/.test(
                name,
              )
            ? 'gc'
            : name.startsWith('Builtins_')
              ? 'builtins'
              : 'native';
    } else if (line.startsWith('cfn=')) nameOf(line.slice(4));
    else if (line.startsWith('calls=')) afterCall = true;
    else if (/^[0-9+*-]/.test(line)) {
      const cost = Number(line.split(' ')[1] ?? 0);
      if (afterCall)
        afterCall = false; // a call's inclusive cost, not the caller's own
      else byKind[kind] += cost;
    }
  }
  return byKind;
}

// --config <file> (repeatable): a config of your own, asked GET /mock/users/42 with the bench key.
for (const file of values.config ?? []) LOADS[file] = { file: resolve(file), path: '/mock/users/42', headers: {} };
const loadNames = values.config === undefined ? values.load.split(',') : values.config;

const k = (x) => `${(x / N / 1000).toFixed(1)}k`;
for (const name of loadNames) {
  const load = LOADS[name];
  if (load === undefined) throw new Error(`no load ${name} (${Object.keys(LOADS).join(', ')})`);
  for (const [i, cli] of CLIS.entries()) {
    const file = await measure(cli, load, join(outDir, `callgrind.${name.replace(/[^A-Za-z0-9-]+/g, '_')}.${i}.out`));
    const by = kinds(file);
    const mutator = by.js + by.builtins + by.native;
    const total = mutator + by.gc + by.compiler;
    console.log(
      `${name} ${cli}: mutator ${k(mutator)} instructions/request (js ${k(by.js)}, builtins ${k(by.builtins)}, native ${k(by.native)}); gc ${k(by.gc)}, compiler ${k(by.compiler)}; total ${k(total)}`,
    );
  }
}
if (values.keep === undefined) rmSync(dir, { recursive: true, force: true });
