import { isMap, isScalar, isSeq, parseDocument, type Document, type YAMLMap, type YAMLSeq } from 'yaml';
import { routeShape } from '../route-path.js';
import type { ImportedEndpoint, Mapping } from './operations.js';
import { endpointValue, MARKER, OWNED_FIELDS, renderEndpoint, SOURCE } from './render.js';

/** An endpoint of the existing config, with where its text is. */
interface ExistingItem {
  value: Record<string, unknown>;
  /** The `openapi:` marker of an imported endpoint. */
  key?: string;
  /** Its `openapiSpec:`, the description it came from; undefined when imported before that field existed. */
  source?: string;
  /** Start of the line of its `-`, or of the comment line right above (its summary) when imported. */
  start: number;
  end: number;
}

/** The parts of an existing config an import reads and edits. */
export interface ExistingConfig {
  source: string;
  items: ExistingItem[];
  eol: string;
  /** Where new endpoints go, and with which indentation; undefined when the text needs `endpoints:` first. */
  insertAt: number;
  indent: number;
  /** Text to put before the first new endpoint (`endpoints:` when the key is missing). */
  prefix: string;
  /** A range to drop when endpoints are inserted (an empty flow `[]`). */
  replaceEnd: number;
}

export type ParseExistingResult = { ok: true; config: ExistingConfig } | { ok: false; reason: string };

function lineStart(source: string, offset: number): number {
  return source.lastIndexOf('\n', offset - 1) + 1;
}

/** The line above `start` when it is a comment indented like the item: the summary an import wrote. */
function withSummaryLine(source: string, start: number, indent: number): number {
  if (start === 0) return start;
  const above = lineStart(source, start - 1);
  const line = source.slice(above, start).replace(/\r?\n$/, '');
  return new RegExp(`^ {${indent}}#`).test(line) ? above : start;
}

function readItem(source: string, node: unknown, index: number, marker: string): ExistingItem | string {
  if (!isMap(node) || node.range === undefined || node.range === null)
    return `endpoints[${index}] is not a block mapping`;
  const map = node as YAMLMap;
  const [from, , to] = map.range as [number, number, number];
  let dash = from - 1;
  while (dash >= 0 && source[dash] === ' ') dash--;
  if (source[dash] !== '-') return `endpoints[${index}] is not written in block style (- method: …)`;
  const line = lineStart(source, dash);
  if (!/^ *$/.test(source.slice(line, dash))) return `endpoints[${index}] does not start on a line of its own`;
  const value = map.toJSON() as Record<string, unknown>;
  const mark = map.get(marker, true);
  const key = isScalar(mark) && typeof mark.value === 'string' ? mark.value : undefined;
  const recorded = value[SOURCE];
  const start = key === undefined ? line : withSummaryLine(source, line, dash - line);
  return { value, key, source: typeof recorded === 'string' ? recorded : undefined, start, end: to };
}

/**
 * Reads the endpoints of an existing config for a merge: each one's value and text range. Refuses
 * (a reason) a file that is not a single YAML mapping or whose `endpoints` is not a block sequence,
 * since the import edits the text and must leave everything else byte for byte. `marker` is the
 * field that marks the endpoints this tool owns (`openapi` for an import, `recorded` for a recording).
 */
export function parseExisting(source: string, marker: string = MARKER): ParseExistingResult {
  const doc: Document = parseDocument(source, { keepSourceTokens: false });
  if (doc.errors.length > 0)
    return { ok: false, reason: `it is not valid YAML: ${doc.errors[0]?.message.split('\n')[0]}` };
  if (!isMap(doc.contents)) return { ok: false, reason: 'its top level is not a mapping' };
  const eol = source.includes('\r\n') ? '\r\n' : '\n';
  const endpoints = doc.contents.get('endpoints', true);
  const pair = doc.contents.items.find((p) => isScalar(p.key) && p.key.value === 'endpoints');
  if (pair === undefined) {
    const prefix = (source === '' || source.endsWith('\n') ? '' : eol) + `endpoints:${eol}`;
    return {
      ok: true,
      config: { source, items: [], eol, insertAt: source.length, indent: 2, prefix, replaceEnd: source.length },
    };
  }
  if (endpoints === null || endpoints === undefined || (isScalar(endpoints) && endpoints.value === null)) {
    const keyEnd = (pair.key as { range?: [number, number, number] }).range?.[1] ?? 0;
    const nl = source.indexOf('\n', keyEnd);
    const at = nl === -1 ? source.length : nl + 1;
    return {
      ok: true,
      config: { source, items: [], eol, insertAt: at, indent: 2, prefix: nl === -1 ? eol : '', replaceEnd: at },
    };
  }
  if (!isSeq(endpoints)) return { ok: false, reason: '`endpoints` is not a list' };
  const seq = endpoints as YAMLSeq;
  if (seq.flow) {
    if (seq.items.length > 0)
      return {
        ok: false,
        reason: '`endpoints` is written in flow style ([…]); write it as a block list (- method: …) to import into it',
      };
    const [from, , to] = seq.range as [number, number, number];
    return { ok: true, config: { source, items: [], eol, insertAt: from, indent: 2, prefix: eol, replaceEnd: to } };
  }
  const items: ExistingItem[] = [];
  for (const [i, node] of seq.items.entries()) {
    const item = readItem(source, node, i, marker);
    if (typeof item === 'string') return { ok: false, reason: item };
    items.push(item);
  }
  const firstNode = seq.items[0] as YAMLMap;
  const firstStart = (firstNode.range as [number, number, number])[0];
  let dash = firstStart - 1;
  while (source[dash] === ' ') dash--;
  const indent = dash - lineStart(source, dash);
  const last = items[items.length - 1] as ExistingItem;
  const prefix = source.slice(0, last.end).endsWith('\n') ? '' : eol;
  return { ok: true, config: { source, items, eol, insertAt: last.end, indent, prefix, replaceEnd: last.end } };
}

/**
 * Whether an endpoint of the config belongs to the description being imported (`spec`, as written
 * in `openapiSpec:`): it names it, or it names none (imported before the field existed) and the
 * description has its operation. Endpoints of other descriptions are never changed or removed.
 */
function ownedBy(item: ExistingItem, spec: string, keys: ReadonlySet<string>): boolean {
  if (item.key === undefined) return false;
  return item.source === undefined ? keys.has(item.key) : samePath(item.source, spec);
}

const samePath = (a: string, b: string): boolean => normalize(a) === normalize(b);
const normalize = (p: string): string => p.replace(/\\/g, '/').replace(/^(\.\/)+/, '');

/**
 * The routes taken by endpoints this import does not own — the user's own and those of other
 * descriptions: `GET /users/:` → `your endpoint GET /users/:id`.
 */
export function userRoutes(
  config: ExistingConfig,
  spec = '',
  keys: ReadonlySet<string> = new Set(),
): Map<string, string> {
  const routes = new Map<string, string>();
  for (const item of config.items) {
    if (ownedBy(item, spec, keys)) continue;
    const { method, path } = item.value;
    if (typeof method !== 'string' || typeof path !== 'string') continue;
    const holder =
      item.key === undefined
        ? 'your endpoint'
        : `the endpoint imported from ${item.source ?? 'another description'} as`;
    routes.set(`${method.toUpperCase()} ${routeShape(path)}`, `${holder} ${method.toUpperCase()} ${path}`);
  }
  return routes;
}

function isDeepEqual(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (typeof a !== 'object' || typeof b !== 'object' || a === null || b === null) return false;
  if (Array.isArray(a) !== Array.isArray(b)) return false;
  const ka = Object.keys(a);
  const kb = Object.keys(b);
  if (ka.length !== kb.length) return false;
  return ka.every(
    (k) => Object.hasOwn(b, k) && isDeepEqual((a as Record<string, unknown>)[k], (b as Record<string, unknown>)[k]),
  );
}

/** The endpoint's new value, keeping the fields the user added to it (failRate, delay, …). */
function valueFor(endpoint: ImportedEndpoint, spec: string, existing?: ExistingItem): Record<string, unknown> {
  const userFields =
    existing === undefined ? [] : Object.entries(existing.value).filter(([k]) => !OWNED_FIELDS.includes(k));
  return endpointValue(endpoint, spec, userFields);
}

/** What an import changes: counts and the new text (equal to the source when nothing changed). */
export interface MergeResult {
  text: string;
  added: number;
  updated: number;
  unchanged: number;
  removed: string[];
}

/**
 * Applies a mapping to the config text: an imported endpoint still in the description is replaced
 * where it stands when its value changed (and left byte for byte when not), a new one is appended
 * after the last endpoint, one the description no longer has is removed. The user's endpoints and
 * every other byte of the file stay as they are.
 */
export function mergeEndpoints(config: ExistingConfig, mapping: Mapping, spec: string): MergeResult {
  const byKey = new Map(mapping.endpoints.map((e) => [e.key, e]));
  const owned = config.items.filter((i) => ownedBy(i, spec, operationKeys(mapping)));
  const imported = new Map(owned.map((i) => [i.key as string, i]));
  const edits: { start: number; end: number; text: string }[] = [];
  const result: MergeResult = { text: config.source, added: 0, updated: 0, unchanged: 0, removed: [] };
  const { eol, indent } = config;

  for (const item of owned) {
    const endpoint = byKey.get(item.key as string);
    // An operation skipped this time (now colliding) keeps its old endpoint rather than losing it silently.
    if (endpoint === undefined) {
      if (mapping.skipped.some((s) => s.key === item.key)) continue;
      edits.push({ start: item.start, end: item.end, text: '' });
      result.removed.push(item.key as string);
      continue;
    }
    const value = valueFor(endpoint, spec, item);
    if (isDeepEqual(value, item.value)) {
      result.unchanged++;
      continue;
    }
    edits.push({ start: item.start, end: item.end, text: renderEndpoint(endpoint.summary, value, indent, eol) });
    result.updated++;
  }
  const fresh = mapping.endpoints.filter((e) => !imported.has(e.key));
  if (fresh.length > 0) {
    const blocks = fresh.map((e) => renderEndpoint(e.summary, valueFor(e, spec), indent, eol));
    const separator = config.items.length > 0 ? eol : '';
    edits.push({ start: config.insertAt, end: config.replaceEnd, text: config.prefix + separator + blocks.join(eol) });
    result.added = fresh.length;
  }
  edits.sort((a, b) => b.start - a.start);
  let text = config.source;
  for (const edit of edits) text = text.slice(0, edit.start) + edit.text + text.slice(edit.end);
  result.text = text;
  return result;
}

/** What `--check` reports: operations the config lacks, and imported endpoints the description no longer has. */
export interface Drift {
  missing: ImportedEndpoint[];
  stale: string[];
  outdated: string[];
}

/** Compares a config with a mapping without changing anything. */
export function findDrift(config: ExistingConfig, mapping: Mapping, spec: string): Drift {
  const imported = new Map(
    config.items.filter((i) => ownedBy(i, spec, operationKeys(mapping))).map((i) => [i.key as string, i]),
  );
  const known = new Set([...mapping.endpoints.map((e) => e.key), ...mapping.skipped.map((s) => s.key)]);
  return {
    missing: mapping.endpoints.filter((e) => !imported.has(e.key)),
    stale: [...imported.keys()].filter((k) => !known.has(k)),
    outdated: mapping.endpoints
      .filter((e) => {
        const item = imported.get(e.key);
        return item !== undefined && !isDeepEqual(valueFor(e, spec, item), item.value);
      })
      .map((e) => e.key),
  };
}

/**
 * The descriptions (as the config names them, `openapiSpec:`) other than `spec` that the config's
 * imported endpoints came from, in order of first appearance.
 */
export function otherSources(config: ExistingConfig, spec: string): string[] {
  const found: string[] = [];
  for (const item of config.items) {
    if (
      item.key === undefined ||
      item.source === undefined ||
      samePath(item.source, spec) ||
      found.includes(item.source)
    )
      continue;
    found.push(item.source);
  }
  return found;
}

/** The operations of a mapping, written and skipped: what a legacy endpoint (without `openapiSpec`) is matched with. */
export function operationKeys(mapping: Mapping): Set<string> {
  return new Set([...mapping.endpoints.map((e) => e.key), ...mapping.skipped.map((s) => s.key)]);
}
