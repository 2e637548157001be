import { readFile } from 'node:fs/promises';
import { dirname, relative, resolve, sep } from 'node:path';
import { formatIssue, parseConfig } from '../config/load.js';
import { cleanupTempFiles, writeFileAtomic } from '../state/atomic-write.js';
import { findDrift, mergeEndpoints, otherSources, parseExisting, userRoutes, type ExistingConfig } from './merge.js';
import { mapOperations, operationKeysOf } from './operations.js';
import { keepsDocumentPaths, lookAlikeShape } from './look-alike.js';
import { createPatternString, type RandExpClass } from './pattern.js';
import { readDescription } from '../description/read-description.js';
import type { Sampler } from './sample.js';
import { createExpander } from './schema-expand.js';
import { driftReport, importSummary, nothingCompared } from './summary.js';
import { eventDrift, mergeEventTemplates } from './merge-events.js';
import { importedEvents } from './webhook-events.js';
import { groupResources, mergeResources, type ImportedResource } from './resources.js';
import type { Json, JsonObject } from '../description/json-pointer.js';

export interface ImportOptions {
  /** The description, as the user wrote it. */
  spec: string;
  /** The config file, as the user wrote it. */
  config: string;
  check?: boolean;
  /** Folders outside the description's own whose files its `$ref`s may read (as the user wrote them). */
  allowRefsUnder?: readonly string[];
  /** The key of a new config (the CLI passes a fresh one). */
  newApiKey: () => string;
  /** A new config takes the API's shape: `server.basePath` and `auth.accept` from the description. */
  lookAlike?: boolean;
  /** Operations that make a collection become a resource of `resources:` instead of endpoints. */
  resources?: boolean;
  /**
   * Makes the check of generated values against their schemas (the CLI gives request validation's,
   * src/validate/answer-check.ts): a value its schema refuses is made again or not written.
   */
  answerCheck?: (doc: JsonObject, version: string) => Promise<(pointer: string, value: Json) => boolean>;
}

/** What an import did: lines for stderr and the exit code (0 done or in sync, 1 failed or out of sync). Never throws for expected problems. */
export interface ImportOutcome {
  code: 0 | 1;
  lines: string[];
}

const fail = (...lines: string[]): ImportOutcome => ({ code: 1, lines });

function newConfigHeader(spec: string, apiKey: string, shape: readonly string[] = []): string {
  return [
    `# mockapi config imported from ${spec} by \`mockapi import\`.`,
    '# Endpoints marked `openapi:` are updated by the next import; fields you add to them',
    '# (failRate, delay, …) and endpoints without the marker are left as they are.',
    `apiKey: ${apiKey}`,
    ...shape,
    '',
  ].join('\n');
}

async function readConfigText(file: string, shown: string): Promise<{ bytes?: Buffer } | { error: string }> {
  try {
    return { bytes: await readFile(file) };
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'ENOENT') return {};
    return {
      error: `cannot read ${shown}: ${code === 'EISDIR' ? 'it is a folder' : code === 'EACCES' ? 'permission denied' : (err as Error).message}`,
    };
  }
}

/** `mockapi import <spec> [-c config] [--check]`: reads a description and writes or checks the config. */
export async function importDescription(opts: ImportOptions): Promise<ImportOutcome> {
  const file = resolve(opts.config);
  const read = await readDescription(resolve(opts.spec), { allowRefsUnder: opts.allowRefsUnder });
  if (!read.ok) return fail(read.message, `${opts.config} was left unchanged`);

  const current = await readConfigText(file, opts.config);
  if ('error' in current) return fail(current.error);
  const source = current.bytes?.toString('utf8');
  if (current.bytes !== undefined && !Buffer.from(source as string, 'utf8').equals(current.bytes))
    return fail(`${opts.config} is not UTF-8 text; nothing was imported`);
  // `--look-alike` shapes a new config only; an existing one keeps its own server and auth.
  const shape =
    source === undefined && opts.lookAlike === true ? lookAlikeShape(read.doc, opts.spec) : { lines: [], notes: [] };
  const parsed = parseExisting(source ?? newConfigHeader(opts.spec, opts.newApiKey(), shape.lines));
  if (!parsed.ok) return fail(`cannot import into ${opts.config}: ${parsed.reason}; it was left unchanged`);
  const existing: ExistingConfig = parsed.config;

  const sampler = ((await import('openapi-sampler')) as unknown as { default: { sample: Sampler } }).default.sample;
  const randexp = (await import('randexp')) as unknown as { default: RandExpClass | { default: RandExpClass } };
  const RandExp = typeof randexp.default === 'function' ? randexp.default : randexp.default.default;
  const expand = createExpander(read.doc, { patternString: createPatternString(RandExp) });
  // Which description this is, as its endpoints record it: its path from the config's folder.
  const specId = relative(dirname(file), resolve(opts.spec)).split(sep).join('/');
  const checkAnswer = opts.answerCheck === undefined ? undefined : await opts.answerCheck(read.doc, read.version);
  const mapping = mapOperations(
    { doc: read.doc, sampler, expand, ...(checkAnswer === undefined ? {} : { checkAnswer }) },
    userRoutes(existing, specId, operationKeysOf(read.doc)),
    keepsDocumentPaths(read.doc, source, opts.lookAlike === true),
  );
  let resources: ImportedResource[] = [];
  if (opts.resources === true) ({ resources, endpoints: mapping.endpoints } = groupResources(mapping));

  if (opts.check === true) {
    if (source === undefined)
      return fail(`${opts.config} does not exist; run \`mockapi import ${opts.spec} -c ${opts.config}\` to create it`);
    if (mapping.read > 0 && mapping.endpoints.length === 0)
      return fail(...nothingCompared(opts.spec, opts.config, mapping, otherSources(existing, specId)));
    const events = importedEvents(read.doc, sampler, createExpander(read.doc));
    const report = driftReport(
      opts.spec,
      opts.config,
      mapping,
      findDrift(existing, mapping, specId),
      eventDrift(source, events, specId),
      events.length,
    );
    return { code: report.inSync ? 0 : 1, lines: report.lines };
  }

  const merged = mergeEndpoints(existing, mapping, specId);
  // Webhook event templates from `callbacks` and 3.1 `webhooks`, merged as endpoints are (merge-events.ts).
  const events = mergeEventTemplates(merged.text, importedEvents(read.doc, sampler, createExpander(read.doc)), specId);
  merged.text = events.text;
  const grouped = mergeResources(merged.text, resources);
  merged.text = grouped.text;
  const summary = [
    ...importSummary(opts.spec, opts.config, mapping, merged),
    ...events.lines,
    ...shape.notes,
    ...grouped.lines,
  ];
  if (source !== undefined && merged.text === source)
    return { code: 0, lines: [...summary, `${opts.config} is up to date; nothing was written`] };

  const bytes = Buffer.from(merged.text, 'utf8');
  const checked = await parseConfig(bytes, opts.config);
  if (!checked.ok)
    return fail(
      ...checked.issues.map(formatIssue),
      `the imported config would not be valid; ${opts.config} was left unchanged`,
    );
  try {
    await cleanupTempFiles(file);
    // Someone else's edit made while we worked is never overwritten: compare, then rename (atomic).
    const now = await readConfigText(file, opts.config);
    if (
      'error' in now ||
      (now.bytes === undefined) !== (current.bytes === undefined) ||
      (now.bytes !== undefined && !now.bytes.equals(current.bytes as Buffer))
    ) {
      return fail(`${opts.config} changed while importing; nothing was written, run the import again`);
    }
    await writeFileAtomic(file, bytes);
  } catch (err) {
    return fail(`cannot write ${opts.config}: ${(err as Error).message}`);
  }
  return { code: 0, lines: summary };
}
