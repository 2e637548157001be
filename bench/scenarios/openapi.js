// OpenAPI figures (issue 46): `mockapi import` of each description of the test corpus
// (test/fixtures/openapi/corpus: GitHub, Stripe, Twilio, OpenAI, Adyen Checkout) — wall time, CPU
// time and peak memory — then `serve` of the imported GitHub and Stripe configs (time to the ready
// line, CPU, memory), and the start with `openapi.spec` against the same config without it (a synthetic
// 1,000-operation description in 11 files, as bench/import.js makes it): a ratio with its target,
// since a start with a description costs nothing more (it is read on first use). Each figure is
// measured for this build and the previous one in interleaved rounds and shown as this build's over
// the previous one's: the previous build is `--compare <bin>` (another build's CLI) when given, else
// the commit `--previous <ref>` names (default: the newest v* tag, else HEAD^), unpacked and built
// beside this one (lib/previous-build.js); `--previous none` measures this build alone.
import { spawn } from 'node:child_process';
import { mkdir, readFile, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { brotliDecompressSync } from 'node:zlib';
import { stringify } from 'yaml';
import { CLI, ROOT, flags, progress } from '../lib/options.js';
import { median } from '../lib/processes.js';
import { record, fmtMs, fmtMb } from '../lib/report.js';
import { previousBuild, previousCommit } from '../lib/previous-build.js';

const CORPUS = ['github', 'stripe', 'twilio', 'openai', 'adyen-checkout'];
const ROUNDS = 3;
const USAGE = join(ROOT, 'bench', 'lib', 'report-usage.cjs');

/**
 * Runs `node <cli> args` (in `cwd`) to its end, or, with `readyLine`, until it prints its ready
 * line (then stops it): wall ms, CPU ms and peak RSS (MB) of the child, read from its own
 * process.resourceUsage() (lib/report-usage.cjs writes it at exit).
 */
async function measure(cli, args, cwd, readyLine = false) {
  const usageFile = join(cwd, `usage-${process.pid}-${Date.now()}.json`);
  const started = performance.now();
  const child = spawn(process.execPath, ['--require', USAGE, cli, ...args], {
    cwd,
    stdio: ['ignore', 'pipe', 'pipe'],
    env: { ...process.env, MOCKAPI_BENCH_USAGE: usageFile },
  });
  let out = '';
  let err = '';
  child.stderr.on('data', (d) => (err += d));
  let wallMs;
  const exited = new Promise((resolve) => child.once('exit', resolve));
  child.stdout.on('data', (d) => {
    out += d;
    if (readyLine && wallMs === undefined && /listening on /.test(out)) {
      wallMs = performance.now() - started;
      child.kill('SIGINT');
    }
  });
  const code = await exited;
  wallMs ??= performance.now() - started;
  if (!readyLine && code !== 0) throw new Error(`${cli} ${args.join(' ')} exited ${code}: ${err}`);
  const usage = JSON.parse(await readFile(usageFile, 'utf8'));
  await rm(usageFile, { force: true });
  return { wallMs, cpuMs: (usage.userCPUTime + usage.systemCPUTime) / 1000, rssMb: usage.maxRSS / 1024 };
}

/** The previous build's CLI and how it is named, once openapiScenarios found it; undefined: this build alone. */
let previous;

/** The builds measured: this one, and the previous one when there is one. */
function builds() {
  return previous === undefined
    ? [['this', CLI]]
    : [
        ['this', CLI],
        ['previous', previous.cli],
      ];
}

/** The previous build (see the head of this file), or undefined, said in the table. */
async function findPrevious() {
  if (flags.compare !== undefined) return { cli: flags.compare, label: flags.compare };
  if (flags.previous === 'none') return undefined;
  const commit = previousCommit(flags.previous);
  if (commit === undefined) {
    record(
      'openapi: previous build',
      'none',
      undefined,
      `${flags.previous ?? 'HEAD^'} names no commit of this checkout: this build alone`,
    );
    return undefined;
  }
  const built = await previousBuild(commit);
  if (built.error !== undefined) {
    record(
      'openapi: previous build',
      'none',
      undefined,
      `${commit.ref} (${commit.sha.slice(0, 7)}) could not be built, this build alone: ${built.error}`,
    );
    return undefined;
  }
  return built;
}

/** Median of each figure over ROUNDS interleaved rounds, per build. */
async function rounds(run) {
  const runs = Object.fromEntries(builds().map(([name]) => [name, []]));
  for (let round = 0; round < ROUNDS; round++) {
    const order = round % 2 === 0 ? builds() : [...builds()].reverse();
    for (const [name, cli] of order) runs[name].push(await run(cli));
  }
  const pick = (list, key) => median(list.map((r) => r[key]));
  return Object.fromEntries(
    Object.entries(runs).map(([name, list]) => [
      name,
      { wallMs: pick(list, 'wallMs'), cpuMs: pick(list, 'cpuMs'), rssMb: pick(list, 'rssMb') },
    ]),
  );
}

function recordFigure(name, figures, note, check) {
  const mine = figures.this;
  const shown = `${fmtMs(mine.wallMs)}, CPU ${fmtMs(mine.cpuMs)}, ${fmtMb(mine.rssMb)}`;
  const before = figures.previous;
  const versus =
    before === undefined
      ? ''
      : `; previous build ${fmtMs(before.wallMs)}, CPU ${fmtMs(before.cpuMs)}, ${fmtMb(before.rssMb)} (wall ${(mine.wallMs / before.wallMs).toFixed(2)}×, CPU ${(mine.cpuMs / before.cpuMs).toFixed(2)}×, memory ${(mine.rssMb / before.rssMb).toFixed(2)}×)`;
  record(name, shown, check, `median of ${ROUNDS}${versus}${note === undefined ? '' : `; ${note}`}`);
}

/** The synthetic 1,000-operation description of bench/import.js, in `dir`. */
async function synthetic(dir) {
  const schemas = {
    Item: {
      type: 'object',
      required: ['id', 'name'],
      properties: {
        id: { type: 'string', format: 'uuid' },
        name: { type: 'string' },
        status: { type: 'string', enum: ['active', 'archived'] },
      },
    },
  };
  const files = Array.from({ length: 10 }, () => ({}));
  const paths = {};
  for (let i = 0; i < 250; i++) {
    const path = `/resource${i}/{id}`;
    const item = {};
    for (const method of ['get', 'put', 'post', 'delete']) {
      item[method] = {
        operationId: `${method}${i}`,
        parameters: [{ name: 'id', in: 'path', required: true, schema: { type: 'string' } }],
        responses: {
          200: { description: 'ok', content: { 'application/json': { schema: { $ref: '../schemas.yaml#/Item' } } } },
        },
      };
      if (method === 'post' || method === 'put')
        item[method].requestBody = { content: { 'application/json': { schema: { $ref: '../schemas.yaml#/Item' } } } };
    }
    files[i % 10][path] = item;
    paths[path] = { $ref: `./paths/part${i % 10}.yaml#/${path.replace(/~/g, '~0').replace(/\//g, '~1')}` };
  }
  await mkdir(join(dir, 'paths'), { recursive: true });
  await Promise.all(files.map((items, f) => writeFile(join(dir, 'paths', `part${f}.yaml`), stringify(items))));
  await writeFile(join(dir, 'schemas.yaml'), stringify(schemas));
  await writeFile(
    join(dir, 'openapi.yaml'),
    stringify({ openapi: '3.1.0', info: { title: 'bench', version: '1' }, paths }),
  );
}

export async function openapiScenarios(dir) {
  previous = await findPrevious();
  if (previous !== undefined)
    record(
      'openapi: previous build',
      previous.label,
      undefined,
      'measured in the same interleaved rounds; ratios below are this build over it',
    );
  const work = join(dir, 'openapi');
  await mkdir(work, { recursive: true });
  for (const name of CORPUS) {
    const text = brotliDecompressSync(
      await readFile(join(ROOT, 'test', 'fixtures', 'openapi', 'corpus', `${name}.json.br`)),
    );
    await writeFile(join(work, `${name}.json`), text);
    progress(`import ${name}.json (${(text.length / 1024 / 1024).toFixed(1)} MB)…`);
    const figures = await rounds(async (cli) => {
      await rm(join(work, `${name}.yaml`), { force: true });
      return measure(cli, ['import', `${name}.json`, '-c', `${name}.yaml`], work);
    });
    recordFigure(`import ${name}.json`, figures);
  }

  // The big imported configs: GitHub's 1,223 endpoints with their Prefer: code=… answers, Stripe's 452 with every answer generated.
  const serveArgs = (config) => ['serve', '-c', config, '--port', '0', '--no-state', '--log', 'off', '--no-watch'];
  for (const [name, label] of [
    ['github', 'GitHub config (1,223 endpoints)'],
    ['stripe', 'Stripe config (452 endpoints)'],
  ]) {
    await rm(join(work, `${name}.yaml`), { force: true });
    await measure(CLI, ['import', `${name}.json`, '-c', `${name}.yaml`], work);
    progress(`serve of the imported ${label}…`);
    recordFigure(
      `serve imported ${label} → ready`,
      await rounds((cli) => measure(cli, serveArgs(`${name}.yaml`), work, true)),
    );
  }

  // The start with openapi.spec against the same config without it.
  const synth = join(work, 'synth');
  await synthetic(synth);
  await measure(CLI, ['import', 'openapi.yaml', '-c', 'plain.yaml'], synth);
  const plain = await readFile(join(synth, 'plain.yaml'), 'utf8');
  await writeFile(join(synth, 'spec.yaml'), plain.replace(/^apiKey:/m, 'openapi:\n  spec: ./openapi.yaml\napiKey:'));
  progress('serve with and without openapi.spec (1,000 operations in 11 files)…');
  const without = await rounds((cli) => measure(cli, serveArgs('plain.yaml'), synth, true));
  const withSpec = await rounds((cli) => measure(cli, serveArgs('spec.yaml'), synth, true));
  recordFigure('serve 1,000 endpoints, no openapi.spec → ready', without);
  const before =
    withSpec.previous === undefined
      ? ''
      : `; previous build ${(withSpec.previous.wallMs / without.previous.wallMs).toFixed(2)}× its start without it`;
  recordFigure(
    'serve 1,000 endpoints with openapi.spec → ready',
    withSpec,
    `${(withSpec.this.wallMs / without.this.wallMs).toFixed(2)}× the start without it (CPU ${(withSpec.this.cpuMs / without.this.cpuMs).toFixed(2)}×, memory ${(withSpec.this.rssMb / without.this.rssMb).toFixed(2)}×)${before}`,
  );
  // The start costs nothing more with a description (it is read on first use): the ratio's target leaves room for a busy machine's noise.
  record(
    'serve with openapi.spec vs without (1,000 endpoints, time to ready)',
    `${fmtMs(withSpec.this.wallMs)} vs ${fmtMs(without.this.wallMs)}`,
    { ratio: withSpec.this.wallMs / without.this.wallMs, max: 1.2 },
    `CPU ${(withSpec.this.cpuMs / without.this.cpuMs).toFixed(2)}×${before}`,
  );
}
