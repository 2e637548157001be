import { isMap, isScalar, parseDocument, type Node, type Pair, type YAMLMap } from 'yaml';
import type { ImportedEvent } from './webhook-events.js';
import { MARKER, SOURCE } from './render.js';

/** What merging event templates changed, and the summary lines that say so. */
export interface EventMerge {
  text: string;
  lines: string[];
}

type Range = [number, number, number];
const rangeOf = (node: unknown): Range | undefined =>
  ((node as { range?: Range | null } | null)?.range ?? undefined) as Range | undefined;
const lineStart = (source: string, offset: number): number => source.lastIndexOf('\n', offset - 1) + 1;
/** `offset`, moved past the end of its line (its newline included) unless a line just ended there. */
const lineEnd = (source: string, offset: number): number => {
  if (offset > 0 && source[offset - 1] === '\n') return offset;
  const nl = source.indexOf('\n', offset);
  return nl === -1 ? source.length : nl + 1;
};
const pairOf = (map: YAMLMap, key: string): Pair | undefined =>
  map.items.find((p) => isScalar(p.key) && p.key.value === key) as Pair | undefined;
const isEmpty = (node: unknown): boolean =>
  node === null || node === undefined || (isScalar(node) && (node.value === null || node.value === ''));
const same = (a: unknown, b: unknown): boolean => JSON.stringify(a) === JSON.stringify(b);

/** An event template's lines at `indent` spaces: its name, then its fields (JSON, which YAML reads as written). */
function renderEvent(name: string, value: Record<string, unknown>, indent: number, eol: string): string {
  const pad = ' '.repeat(indent);
  return [
    `${pad}${JSON.stringify(name)}:`,
    ...Object.entries(value).map(([k, v]) => `${pad}  ${k}: ${JSON.stringify(v)}`),
  ]
    .map((line) => line + eol)
    .join('');
}

const valueOf = (event: ImportedEvent, spec: string, envelope: unknown): Record<string, unknown> => ({
  [MARKER]: event.from,
  [SOURCE]: spec,
  envelope: typeof envelope === 'string' ? envelope : event.template.envelope,
  data: event.template.data,
});

/**
 * `text` with the description's events merged into `webhooks.events`, as imported endpoints are:
 * an event the config lacks is added (marked `openapi:` and `openapiSpec:`); one imported from this
 * description before is updated in place when its data changed (its `envelope` is kept: choosing
 * one is the user's); one without the marker is the user's and stays byte for byte, as do those of
 * other descriptions. Everything else of the file stays as it is. `webhooks:` and `webhooks.events`
 * are made where missing; one written in flow style (`{…}`) with content is left alone and said so.
 */
export function mergeEventTemplates(text: string, events: readonly ImportedEvent[], spec: string): EventMerge {
  if (events.length === 0) return { text, lines: [] };
  const doc = parseDocument(text);
  if (doc.errors.length > 0 || !isMap(doc.contents)) return { text, lines: [] }; // the config's own problems are reported by its validation
  const eol = text.includes('\r\n') ? '\r\n' : '\n';
  const webhooks = pairOf(doc.contents, 'webhooks');
  const edits: Array<{ start: number; end: number; text: string }> = [];
  const added: string[] = [];
  const updated: string[] = [];
  const kept: string[] = [];
  const block = (list: readonly ImportedEvent[], indent: number): string =>
    list.map((e) => renderEvent(e.name, valueOf(e, spec, undefined), indent, eol)).join('');
  const tail = text === '' || text.endsWith('\n') ? '' : eol;

  if (webhooks === undefined) {
    edits.push({
      start: text.length,
      end: text.length,
      text: `${tail}webhooks:${eol}  events:${eol}${block(events, 4)}`,
    });
    added.push(...events.map((e) => e.name));
  } else if (isEmpty(webhooks.value)) {
    const at = lineEnd(text, rangeOf(webhooks.value)?.[2] ?? rangeOf(webhooks.key)?.[2] ?? text.length);
    edits.push({ start: at, end: at, text: `${at === text.length ? tail : ''}  events:${eol}${block(events, 4)}` });
    added.push(...events.map((e) => e.name));
  } else if (!isMap(webhooks.value) || (webhooks.value as YAMLMap).flow === true) {
    return {
      text,
      lines: [
        `  webhook events in the description not imported: webhooks: is not a block mapping (write it as one to import ${events.map((e) => e.name).join(', ')})`,
      ],
    };
  } else {
    const section = webhooks.value as YAMLMap;
    const childIndent = (rangeOf(section)?.[0] ?? 0) - lineStart(text, rangeOf(section)?.[0] ?? 0);
    const eventsPair = pairOf(section, 'events');
    if (eventsPair === undefined) {
      const at = lineEnd(text, rangeOf(section)?.[2] ?? text.length);
      edits.push({
        start: at,
        end: at,
        text: `${at === text.length ? tail : ''}${' '.repeat(childIndent)}events:${eol}${block(events, childIndent + 2)}`,
      });
      added.push(...events.map((e) => e.name));
    } else if (
      isEmpty(eventsPair.value) ||
      (isMap(eventsPair.value) &&
        (eventsPair.value as YAMLMap).flow === true &&
        (eventsPair.value as YAMLMap).items.length === 0)
    ) {
      const value = rangeOf(eventsPair.value);
      const keyEnd = rangeOf(eventsPair.key)?.[2] ?? 0;
      // `events:` alone, `events: ~` or `events: {}`: the block goes on the lines after the key.
      let start = isMap(eventsPair.value) && value !== undefined ? value[0] : keyEnd;
      while (start > keyEnd && text[start - 1] === ' ') start--;
      const end = lineEnd(text, value?.[2] ?? keyEnd);
      edits.push({ start, end, text: `${eol}${block(events, childIndent + 2)}` });
      added.push(...events.map((e) => e.name));
    } else if (!isMap(eventsPair.value) || (eventsPair.value as YAMLMap).flow === true) {
      return {
        text,
        lines: [
          `  webhook events in the description not imported: webhooks.events is not a block mapping (write it as one to import ${events.map((e) => e.name).join(', ')})`,
        ],
      };
    } else {
      const map = eventsPair.value as YAMLMap;
      const first = rangeOf(map)?.[0] ?? 0;
      const indent = first - lineStart(text, first);
      const fresh: ImportedEvent[] = [];
      for (const event of events) {
        const pair = map.items.find((p) => isScalar(p.key) && String(p.key.value) === event.name) as
          Pair<Node, Node> | undefined;
        if (pair === undefined) {
          fresh.push(event);
          continue;
        }
        const current = (isMap(pair.value) ? pair.value.toJSON() : {}) as Record<string, unknown>;
        const mine =
          typeof current[MARKER] !== 'string' ||
          (typeof current[SOURCE] === 'string' && normalize(current[SOURCE]) !== normalize(spec));
        if (mine) {
          kept.push(event.name);
          continue;
        }
        const next = valueOf(event, spec, current.envelope);
        if (same(next, current)) continue;
        const start = lineStart(text, rangeOf(pair.key)?.[0] ?? 0);
        edits.push({
          start,
          end: lineEnd(text, rangeOf(pair.value)?.[2] ?? rangeOf(pair.key)?.[2] ?? start),
          text: renderEvent(event.name, next, indent, eol),
        });
        updated.push(event.name);
      }
      if (fresh.length > 0) {
        const at = lineEnd(text, rangeOf(map)?.[2] ?? text.length);
        edits.push({ start: at, end: at, text: `${at === text.length ? tail : ''}${block(fresh, indent)}` });
        added.push(...fresh.map((e) => e.name));
      }
    }
  }
  edits.sort((a, b) => b.start - a.start);
  let out = text;
  for (const edit of edits) out = out.slice(0, edit.start) + edit.text + out.slice(edit.end);
  const lines: string[] = [];
  const s = (n: number): string => (n === 1 ? '' : 's');
  if (added.length > 0)
    lines.push(
      `  ${added.length} webhook event template${s(added.length)} added under webhooks.events (${added.join(', ')}); add webhooks.targets and a send to use them`,
    );
  if (updated.length > 0)
    lines.push(
      `  ${updated.length} imported webhook event template${s(updated.length)} updated (${updated.join(', ')})`,
    );
  if (kept.length > 0)
    lines.push(
      `  webhook event${s(kept.length)} kept as written (yours, not imported from this description): ${kept.join(', ')}`,
    );
  return { text: out, lines };
}

const normalize = (p: string): string => p.replace(/\\/g, '/').replace(/^(\.\/)+/, '');

/** How a config's event templates differ from a description's events (`mockapi import --check`). */
export interface EventDrift {
  /** In the description; the config has no event of that name. */
  missing: string[];
  /** Imported from this description, no longer in it. */
  stale: string[];
  /** Imported from this description, which now sends other data: an import would update them. */
  changed: string[];
}

/**
 * What an import would do to `text`'s `webhooks.events`, by the rules {@link mergeEventTemplates}
 * follows: an event without the import marker, or imported from another description, is the user's
 * and never drifts.
 */
export function eventDrift(text: string, events: readonly ImportedEvent[], spec: string): EventDrift {
  const doc = parseDocument(text);
  const root = doc.errors.length === 0 && isMap(doc.contents) ? doc.contents : undefined;
  const webhooks = root === undefined ? undefined : pairOf(root, 'webhooks');
  const eventsPair = webhooks !== undefined && isMap(webhooks.value) ? pairOf(webhooks.value, 'events') : undefined;
  const current = (eventsPair !== undefined && isMap(eventsPair.value) ? eventsPair.value.toJSON() : {}) as Record<
    string,
    unknown
  >;
  const fromHere = (value: unknown): value is Record<string, unknown> => {
    if (value === null || typeof value !== 'object') return false;
    const v = value as Record<string, unknown>;
    return typeof v[MARKER] === 'string' && (typeof v[SOURCE] !== 'string' || normalize(v[SOURCE]) === normalize(spec));
  };
  const names = new Set(events.map((e) => e.name));
  const drift: EventDrift = { missing: [], stale: [], changed: [] };
  for (const event of events) {
    if (!Object.hasOwn(current, event.name)) drift.missing.push(event.name);
    else {
      const value = current[event.name];
      if (fromHere(value) && !same(valueOf(event, spec, value.envelope), value)) drift.changed.push(event.name);
    }
  }
  for (const [name, value] of Object.entries(current)) if (!names.has(name) && fromHere(value)) drift.stale.push(name);
  return drift;
}
