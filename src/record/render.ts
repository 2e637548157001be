import type { ExistingConfig } from '../openapi/merge.js';
import { renderEndpoint } from '../openapi/render.js';
import type { RecordedEndpoint } from './infer.js';
import { mergeRecordedVerify } from './verify-example.js';

/** The config field that marks an endpoint written by a recording; its value is the endpoint's route. */
export const RECORDED_MARKER = 'recorded';
/** The fields a recording writes; every other field of a recorded endpoint is the user's and is kept. */
const OWNED = new Set([
  RECORDED_MARKER,
  'method',
  'path',
  'response',
  'responses',
  'sequence',
  'pick',
  'loop',
  'verify',
]);

function isDeepEqual(a: unknown, b: unknown): boolean {
  return JSON.stringify(a) === JSON.stringify(b);
}

/** A recorded block of the new text: where it is, for the final scan's locations. */
export interface WrittenBlock {
  key: string;
  start: number;
  text: string;
}

export interface RecordMerge {
  text: string;
  added: string[];
  updated: string[];
  unchanged: string[];
  /** The recorded blocks as they stand in `text`. */
  blocks: WrittenBlock[];
}

/**
 * Writes recorded endpoints into the config text: one recorded earlier is replaced where it stands
 * (fields the user added to it stay) and left byte for byte when unchanged; a new one is appended
 * after the last endpoint. Hand-written endpoints, comments and every other byte stay as they are;
 * recorded endpoints this recording did not see stay too.
 */
export function mergeRecorded(config: ExistingConfig, endpoints: readonly RecordedEndpoint[]): RecordMerge {
  const { eol, indent } = config;
  const byKey = new Map(endpoints.map((e) => [e.key, e]));
  const present = new Set<string>();
  const edits: Array<{ start: number; end: number; text: string; keys: string[] }> = [];
  const result: RecordMerge = { text: config.source, added: [], updated: [], unchanged: [], blocks: [] };
  const summary = (e: RecordedEndpoint) =>
    `recorded from ${e.requests} request${e.requests === 1 ? '' : 's'} by mockapi record`;
  const valueOf = (e: RecordedEndpoint, userFields: Array<[string, unknown]>) => {
    const value: Record<string, unknown> = { [RECORDED_MARKER]: e.key, method: e.method, path: e.path, ...e.answer };
    if (e.verify !== undefined) value.verify = e.verify;
    for (const [k, v] of userFields) value[k] = v;
    return value;
  };
  for (const item of config.items) {
    if (item.key === undefined) continue;
    const e = byKey.get(item.key);
    if (e === undefined) continue;
    present.add(item.key);
    const value = valueOf(
      e,
      Object.entries(item.value).filter(([k]) => !OWNED.has(k)),
    );
    // The examples are the recording's, but the user's `name`, `ignore` and `verify: false` stay.
    if (Object.hasOwn(item.value, 'verify')) value.verify = mergeRecordedVerify(item.value.verify, value.verify);
    if (isDeepEqual(value, item.value)) {
      result.unchanged.push(e.key);
      continue;
    }
    edits.push({
      start: item.start,
      end: item.end,
      text: renderEndpoint(summary(e), value, indent, eol),
      keys: [e.key],
    });
    result.updated.push(e.key);
  }
  const fresh = endpoints.filter((e) => !present.has(e.key));
  if (fresh.length > 0) {
    const blocks = fresh.map((e) => renderEndpoint(summary(e), valueOf(e, []), indent, eol));
    const separator = config.items.length > 0 ? eol : '';
    edits.push({
      start: config.insertAt,
      end: config.replaceEnd,
      text: config.prefix + separator + blocks.join(eol),
      keys: fresh.map((e) => e.key),
    });
    result.added.push(...fresh.map((e) => e.key));
  }
  edits.sort((a, b) => b.start - a.start);
  let text = config.source;
  for (const edit of edits) text = text.slice(0, edit.start) + edit.text + text.slice(edit.end);
  // Where each edit's text landed, for the scan: edits apply from the end, so earlier ones did not move.
  let shift = 0;
  for (const edit of [...edits].reverse()) {
    result.blocks.push({ key: edit.keys.join(', '), start: edit.start + shift, text: edit.text });
    shift += edit.text.length - (edit.end - edit.start);
  }
  result.text = text;
  return result;
}
