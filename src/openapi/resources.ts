import { isMap, isScalar, parseDocument, type Pair, type YAMLMap } from 'yaml';
import type { Json } from '../description/json-pointer.js';
import type { ImportedEndpoint, Mapping } from './operations.js';

/**
 * `mockapi import --resources`: operations that together make a collection — `GET`/`POST <path>`
 * and `GET`/`POST`/`PATCH`/`PUT`/`DELETE <path>/{id}` (and `POST <path>/{id}/<action>`) — become a
 * resource of `resources:` instead of endpoints. The style is read from the answers' shape (a
 * Stripe list, an OpenAI list, a GitHub array), the defaults of a new object from the example of
 * the object, and its id's form from the example's id (`cus_NffrFeUfNV2Hib` → `cus_${randomId(14)}`).
 */

/** A collection found in the description. */
export interface ImportedResource {
  name: string;
  style: 'stripe' | 'github' | 'openai' | 'rest';
  path: string;
  id?: string;
  fields: Record<string, Json>;
  actions: string[];
  /** The operations it answers (`GET /v1/customers/{customer}`). */
  keys: string[];
}

type Obj = Record<string, Json>;
const isObj = (v: unknown): v is Obj => v !== null && typeof v === 'object' && !Array.isArray(v);
const ITEM = /^:[A-Za-z_][A-Za-z0-9_]*$/;

function bodyOf(endpoint: ImportedEndpoint | undefined): Json | undefined {
  return endpoint?.answers[0]?.body;
}

function styleOf(list: Json | undefined, itemUpdate: string | undefined): ImportedResource['style'] {
  if (isObj(list) && list.object === 'list' && 'url' in list) return 'stripe';
  if (isObj(list) && ('first_id' in list || 'last_id' in list)) return 'openai';
  if (isObj(list) && Array.isArray(list.items)) return 'rest';
  if (Array.isArray(list)) return itemUpdate === 'POST' ? 'stripe' : 'github';
  return itemUpdate === 'POST' ? 'stripe' : 'rest';
}

/** `cus_NffrFeUfNV2Hib` → `cus_${randomId(14)}`; undefined for ids of no such shape. */
function idForm(id: Json | undefined): string | undefined {
  if (typeof id !== 'string') return undefined;
  const m = /^([A-Za-z][A-Za-z0-9]*[_-])([A-Za-z0-9]{6,64})$/.exec(id);
  return m === null ? undefined : `${m[1]}\${randomId(${(m[2] as string).length})}`;
}

/** Strings of an example that would read as expressions keep their `${` as text. */
function escaped(value: Json): Json {
  if (typeof value === 'string') return value.replaceAll('${', '$${');
  if (Array.isArray(value)) return value.map(escaped);
  if (isObj(value)) return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, escaped(v)]));
  return value;
}

function nameOf(path: string, taken: ReadonlySet<string>): string {
  const words = path.split('/').filter((s) => s !== '' && !s.startsWith(':'));
  const last = (words.at(-1) ?? 'objects').replace(/[^A-Za-z0-9_-]/g, '_');
  const base = /^[A-Za-z_]/.test(last) ? last : `_${last}`;
  if (!taken.has(base)) return base;
  const longer = `${(words.at(-2) ?? 'x').replace(/[^A-Za-z0-9_-]/g, '_')}_${base}`;
  let name = longer;
  for (let n = 2; taken.has(name); n++) name = `${longer}${n}`;
  return name;
}

/** Splits a mapping into the collections it holds and the endpoints left. */
export function groupResources(mapping: Mapping): { resources: ImportedResource[]; endpoints: ImportedEndpoint[] } {
  const byRoute = new Map<string, ImportedEndpoint>();
  for (const e of mapping.endpoints) byRoute.set(`${e.method} ${e.path}`, e);
  const grouped = new Set<ImportedEndpoint>();
  const resources: ImportedResource[] = [];
  const names = new Set<string>();
  for (const collection of mapping.endpoints) {
    if ((collection.method !== 'GET' && collection.method !== 'POST') || grouped.has(collection)) continue;
    const path = collection.path.replace(/\/$/, '');
    if (path.split('/').some((s) => s.includes(':') && !ITEM.test(s))) continue;
    const items = mapping.endpoints.filter((e) => {
      const rest = e.path.startsWith(`${path}/`) ? e.path.slice(path.length + 1).split('/') : [];
      return rest.length === 1 && ITEM.test(rest[0] as string);
    });
    const get = items.find((e) => e.method === 'GET');
    if (get === undefined) continue;
    const itemPath = get.path;
    const actions = mapping.endpoints.filter(
      (e) =>
        e.method === 'POST' &&
        e.path.startsWith(`${itemPath}/`) &&
        /^[A-Za-z_][A-Za-z0-9_-]*$/.test(e.path.slice(itemPath.length + 1)),
    );
    const members = [
      byRoute.get(`GET ${path}`),
      byRoute.get(`POST ${path}`),
      ...items.filter((e) => e.path === itemPath),
      ...actions,
    ].filter((e): e is ImportedEndpoint => e !== undefined);
    const update = items.find(
      (e) => e.path === itemPath && (e.method === 'POST' || e.method === 'PATCH' || e.method === 'PUT'),
    )?.method;
    const example = bodyOf(get) ?? bodyOf(byRoute.get(`POST ${path}`));
    const fields: Obj = {};
    if (isObj(example))
      for (const [key, value] of Object.entries(example)) if (key !== 'id') fields[key] = escaped(value);
    const name = nameOf(path, names);
    names.add(name);
    const id = idForm(isObj(example) ? example.id : undefined);
    resources.push({
      name,
      style: styleOf(bodyOf(byRoute.get(`GET ${path}`)), update),
      path,
      ...(id === undefined ? {} : { id }),
      fields,
      actions: actions.map((a) => a.path.slice(itemPath.length + 1)),
      keys: members.map((m) => m.key),
    });
    for (const m of members) grouped.add(m);
  }
  return { resources, endpoints: mapping.endpoints.filter((e) => !grouped.has(e)) };
}

/** A resource's lines at two spaces under `resources:` (JSON values, which YAML reads as written). */
function render(resource: ImportedResource, eol: string): string {
  const lines = [`  ${resource.name}:`, `    style: ${resource.style}`, `    path: ${JSON.stringify(resource.path)}`];
  if (resource.id !== undefined) lines.push(`    id: ${JSON.stringify(resource.id)}`);
  lines.push(`    fields: ${JSON.stringify(resource.fields)}`);
  if (resource.actions.length > 0)
    lines.push('    actions:', ...resource.actions.map((action) => `      ${action}: {}`));
  return lines.map((line) => line + eol).join('');
}

/**
 * `text` with the collections added under `resources:` (made when missing). A collection the config
 * already has, by name, is left as it is: resources carry no import marker, so the user's are never
 * rewritten. `resources:` written in flow style is left alone and said so.
 */
export function mergeResources(
  text: string,
  resources: readonly ImportedResource[],
): { text: string; lines: string[] } {
  if (resources.length === 0) return { text, lines: [] };
  const doc = parseDocument(text);
  if (doc.errors.length > 0 || !isMap(doc.contents)) return { text, lines: [] };
  const eol = text.includes('\r\n') ? '\r\n' : '\n';
  const tail = text === '' || text.endsWith('\n') ? '' : eol;
  const pair = doc.contents.items.find((p) => isScalar(p.key) && p.key.value === 'resources') as Pair | undefined;
  const section = pair?.value;
  if (
    pair !== undefined &&
    section !== null &&
    section !== undefined &&
    !(isScalar(section) && (section.value === null || section.value === '')) &&
    (!isMap(section) || (section as YAMLMap).flow === true)
  ) {
    return {
      text,
      lines: [
        `  resources not imported: resources: is not a block mapping (write it as one to import ${resources.map((r) => r.name).join(', ')})`,
      ],
    };
  }
  const existing = new Set(
    isMap(section) ? (section as YAMLMap).items.map((p) => String((p.key as { value?: unknown }).value)) : [],
  );
  const fresh = resources.filter((r) => !existing.has(r.name));
  const kept = resources.filter((r) => existing.has(r.name));
  const block = fresh.map((r) => render(r, eol)).join('');
  let out = text;
  if (fresh.length > 0) {
    if (pair === undefined) out = `${text}${tail}resources:${eol}${block}`;
    else {
      const end =
        (isMap(section)
          ? (section as YAMLMap).range?.[2]
          : (pair.key as { range?: [number, number, number] }).range?.[2]) ?? text.length;
      const nl = text.indexOf('\n', end - 1 < 0 ? 0 : end - 1);
      const at = isMap(section) ? end : nl === -1 ? text.length : nl + 1;
      out = `${text.slice(0, at)}${at === text.length ? tail : ''}${block}${text.slice(at)}`;
    }
  }
  const lines: string[] = [];
  if (fresh.length > 0)
    lines.push(
      `  ${fresh.length} resource${fresh.length === 1 ? '' : 's'} added under resources: ${fresh.map((r) => `${r.name} (${r.style}, ${r.path}: ${r.keys.length} operations)`).join(', ')}`,
    );
  if (kept.length > 0)
    lines.push(
      `  resource${kept.length === 1 ? '' : 's'} kept as written (already in the config): ${kept.map((r) => r.name).join(', ')}`,
    );
  return { text: out, lines };
}
