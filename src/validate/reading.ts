import { compileLeaf, type CompiledLeaf } from '../answer/leaf.js';
import type { Config } from '../config/types.js';
import { loadDescription, type Description } from '../description/description.js';
import { schemaSet, type SchemaSet } from './schemas.js';

/**
 * The OpenAPI description of one config's `openapi:` section, read once, when first wanted: by
 * the first request that needs it (it waits for the read), by a run-time stub that names an
 * operation, or by the compile of a reload or of `mockapi validate` (which wait for it). `serve`
 * does not read it to start. Every endpoint of the config shares the one read and the schemas
 * compiled from it.
 */

/** What every endpoint's validation of one config shares: the description, its schemas, the answer template. */
export interface Shared {
  openapi: NonNullable<Config['openapi']>;
  description: Description;
  set: SchemaSet;
  template: CompiledLeaf | undefined;
}

/** How the read ended: the shared parts, or why the description cannot be used. */
export type ReadOutcome = { ok: true; shared: Shared } | { ok: false; problem: string };

export interface DescriptionReading {
  /** How the read ended; undefined until it has (the request path's one check). */
  readonly outcome: ReadOutcome | undefined;
  /** Starts the read, once; resolves with its outcome. Never rejects. */
  read(): Promise<ReadOutcome>;
  /** Resolves with the outcome once the description was read, whoever started the read; starts nothing. */
  settled(): Promise<ReadOutcome>;
}

/** The reading of each built config's `openapi:` section (a new object per config built): its endpoints, the stubs added to it and the report share it. */
const readings = new WeakMap<NonNullable<Config['openapi']>, DescriptionReading>();

async function prepare(openapi: NonNullable<Config['openapi']>): Promise<ReadOutcome> {
  const read = await loadDescription(openapi.spec);
  if (!read.ok) return { ok: false, problem: read.message };
  const { description } = read;
  // ajv loads with the first schema compiled (a request's), not here.
  const set = schemaSet(description);
  let template: CompiledLeaf | undefined;
  if (openapi.answer !== undefined)
    // status, headers and body only: no capability's part to compile
    template = await compileLeaf(
      openapi.answer,
      'openapi.validate.answer',
      { env: process.env, allowViolations: true },
      undefined,
    );
  return { ok: true, shared: { openapi, description, set, template } };
}

/** The reading of `openapi` (the section of one built config); nothing is read before {@link DescriptionReading.read}. */
export function descriptionReading(openapi: NonNullable<Config['openapi']>): DescriptionReading {
  const known = readings.get(openapi);
  if (known !== undefined) return known;
  let outcome: ReadOutcome | undefined;
  let started: Promise<ReadOutcome> | undefined;
  let settle!: (done: ReadOutcome) => void;
  const settled = new Promise<ReadOutcome>((resolve) => (settle = resolve));
  const reading: DescriptionReading = {
    get outcome() {
      return outcome;
    },
    read() {
      started ??= prepare(openapi)
        .catch((err: unknown): ReadOutcome => ({ ok: false, problem: (err as Error)?.message ?? String(err) }))
        .then((done) => {
          outcome = done;
          settle(done);
          return done;
        });
      return started;
    },
    settled: () => settled,
  };
  readings.set(openapi, reading);
  return reading;
}
