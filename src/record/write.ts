import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { dirname, resolve } from 'node:path';
import { formatIssue, parseConfig } from '../config/load.js';
import { parseExisting } from '../openapi/merge.js';
import { cleanupTempFiles, writeFileAtomic } from '../state/atomic-write.js';
import { resolveAuthValue } from '../config/auth-value.js';
import type { RecordedExchange } from './exchange.js';
import { inferEndpoints } from './infer.js';
import { mergeRecorded, RECORDED_MARKER } from './render.js';
import { scanForSecrets } from './scan.js';
import { createScrubber } from './scrub.js';

export interface WriteOptions {
  /** The config file, as the user wrote it. */
  config: string;
  exchanges: readonly RecordedExchange[];
  dryRun?: boolean;
  /** Templates of an OpenAPI description (`--openapi`): method and route template. */
  openapi?: ReadonlyArray<{ method: string; path: string }>;
  /** Exchanges left out before writing (refusals, `--only`), for the summary. */
  left?: readonly string[];
  env?: Readonly<Record<string, string | undefined>>;
  /** @internal For tests: runs after the merge, just before the file is compared and replaced. */
  beforeCommit?: () => Promise<void>;
}

/** What a write did: lines for stderr, the would-be text on a dry run, and the exit code. */
export interface WriteOutcome {
  code: 0 | 1;
  lines: string[];
  /** On a dry run: the recorded blocks that would be written. */
  preview?: string;
  /** True when the config (or a body file) was written: false on a dry run and when nothing changed. */
  written?: boolean;
  /** The exchanges the merge left out and why (`METHOD path: …`), as the `skipped` lines say. */
  skipped?: string[];
}

const plural = (n: number, word: string) => `${n} ${word}${n === 1 ? '' : 's'}`;
/** How often a write starts over on a config saved by someone else meanwhile, before giving up. */
const MAX_ATTEMPTS = 5;

/**
 * Writes a recording into the config: endpoints inferred from the exchanges, redacted, merged
 * (recorded endpoints updated in place, the rest byte for byte), scanned once more — a known
 * credential or secret shape left anywhere refuses the write (exit 1, locations listed, nothing
 * written) — then body files and the config written atomically. A save made by someone else while
 * this runs is never lost: the merge starts over on the newest bytes.
 */
export async function writeRecording(opts: WriteOptions): Promise<WriteOutcome> {
  const file = resolve(opts.config);
  for (let attempt = 0; attempt < MAX_ATTEMPTS; attempt++) {
    const outcome = await attemptWrite(file, opts);
    if (outcome !== 'changed') return outcome;
  }
  return {
    code: 1,
    lines: [
      `${opts.config} kept changing while the recording was written; nothing was written, stop the recording again`,
    ],
  };
}

async function attemptWrite(file: string, opts: WriteOptions): Promise<WriteOutcome | 'changed'> {
  const shown = opts.config;
  let before: Buffer;
  try {
    before = await readFile(file);
  } catch (err) {
    return { code: 1, lines: [`cannot read ${shown}: ${(err as Error).message}`] };
  }
  const source = before.toString('utf8');
  const loaded = await parseConfig(before, file);
  if (!loaded.ok)
    return {
      code: 1,
      lines: [...loaded.issues.map(formatIssue), `${shown} is not valid; nothing was recorded into it`],
    };
  const config = loaded.config;
  const parsed = parseExisting(source, RECORDED_MARKER);
  if (!parsed.ok) return { code: 1, lines: [`cannot record into ${shown}: ${parsed.reason}; it was left unchanged`] };

  const env = opts.env ?? process.env;
  const upstreamSecrets =
    config.upstream?.auth === undefined ? [] : resolveAuthValue(config.upstream.auth.value, env).secrets;
  const scrub = createScrubber([config.apiKey, ...upstreamSecrets], config.recording);
  const endpoints = parsed.config.items.flatMap((item) => {
    const { method, path } = item.value;
    return typeof method === 'string' && typeof path === 'string'
      ? [{ method: method.toUpperCase(), path, user: item.key === undefined }]
      : [];
  });
  const inference = inferEndpoints(opts.exchanges, {
    endpoints,
    openapi: opts.openapi ?? [],
    captureRequestHeaders: config.recording?.captureRequestHeaders ?? [],
    keepResponseHeaders: config.recording?.keepResponseHeaders ?? [],
    scrub,
    recordNotFound: config.recording?.recordNotFound === true,
  });
  const merged = mergeRecorded(parsed.config, inference.endpoints);

  const lines: string[] = [
    `${plural(opts.exchanges.length, 'request')} recorded into ${plural(inference.endpoints.length, 'endpoint')} of ${shown}`,
  ];
  for (const e of inference.endpoints) {
    const verb = merged.added.includes(e.key) ? 'added' : merged.updated.includes(e.key) ? 'updated' : 'unchanged';
    const parts = [plural(e.requests, 'request')];
    if (e.folded.length > 1)
      parts.push(
        `folded ${e.folded.join(', ')} (template from ${e.source === 'shapes' ? 'segment shapes' : e.source === 'openapi' ? 'the OpenAPI description' : 'the existing endpoint'})`,
      );
    if (e.variation === 'sequence') parts.push('answers changed over time: a sequence');
    else if (e.variation !== undefined) parts.push(`variations: responses by ${e.variation}`);
    lines.push(`  ${verb} ${e.key} (${parts.join('; ')})`);
  }
  for (const [reason, n] of [...scrub.counts.entries()].sort()) lines.push(`  redacted ${n} × ${reason}`);
  for (const path of [...inference.files.keys()].sort()) lines.push(`  body file ${path}`);
  for (const skip of [...inference.skipped, ...(opts.left ?? [])]) lines.push(`  skipped ${skip}`);

  const hits = scanForSecrets(
    shown,
    merged.text,
    merged.blocks,
    inference.files.values(),
    scrub.known,
    scrub.secretField,
  );
  for (const file of inference.files.values()) delete file.text; // scanned: only the bytes are written
  if (hits.length > 0) {
    return {
      code: 1,
      lines: [
        ...lines,
        `refused: a secret would have been written (${plural(hits.length, 'place')}); nothing was written:`,
        ...hits.map((h) => `  ${h.where}: ${h.what}`),
        'add the field or a pattern to recording.redact, or leave that request out with --only',
      ],
    };
  }
  const { skipped } = inference;
  if (opts.dryRun === true)
    return {
      code: 0,
      lines: [...lines, `dry run: ${shown} was left unchanged`],
      preview: merged.blocks.map((b) => b.text).join(''),
      skipped,
    };
  if (merged.text === source && inference.files.size === 0)
    return {
      code: 0,
      // Something left out was not taken in: the config is not "up to date" with it.
      lines: [
        ...lines,
        skipped.length > 0
          ? `nothing was written; ${shown} was left unchanged`
          : `${shown} is up to date; nothing was written`,
      ],
      skipped,
    };

  try {
    for (const f of inference.files.values()) {
      const target = resolve(dirname(file), f.path);
      await mkdir(dirname(target), { recursive: true });
      await writeFile(target, f.bytes); // named by content: rewriting one gives the same bytes
    }
  } catch (err) {
    return {
      code: 1,
      lines: [...lines, `cannot write a body file: ${(err as Error).message}; ${shown} was left unchanged`],
    };
  }
  const bytes = Buffer.from(merged.text, 'utf8');
  const checked = await parseConfig(bytes, file);
  if (!checked.ok)
    return {
      code: 1,
      lines: [
        ...lines,
        ...checked.issues.map(formatIssue),
        `the recorded config would not be valid; ${shown} was left unchanged`,
      ],
    };
  try {
    await cleanupTempFiles(file);
    await opts.beforeCommit?.();
    const now = await readFile(file);
    if (!now.equals(before)) return 'changed'; // someone saved meanwhile: merge again into their bytes
    await writeFileAtomic(file, bytes);
  } catch (err) {
    return { code: 1, lines: [...lines, `cannot write ${shown}: ${(err as Error).message}`] };
  }
  return { code: 0, lines, written: true, skipped };
}
