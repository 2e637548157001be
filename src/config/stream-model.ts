import type { DelayShape } from './units.js';
import { parseDuration, parseFailRate } from './units.js';

/**
 * The `stream:` of an answer, as the loaded config holds it: plain data (durations in
 * milliseconds, `$each` already expanded), so a stream can be written back as YAML or JSON — a
 * recorded SSE answer becomes explicit `events`.
 */
export interface StreamConfig {
  format: StreamFormat;
  /** A provider's wire format, filled from `text`; absent for explicit `events`. */
  preset?: StreamPreset;
  /** Presets: the answer's text (may hold `${…}`), split by `chunkBy`. */
  text?: string;
  /** Presets: `word` (a word with the spaces before it), `char`, or a number of characters. */
  chunkBy?: 'word' | 'char' | number;
  /** Presets: the model named when the request names none. */
  model?: string;
  /** Presets: `finish_reason` / `stop_reason` / the response's status of the final event. */
  finishReason?: string;
  /** Explicit events (`$each` expanded); empty for a preset. */
  events: StreamEventConfig[];
  /** Wait before the head and the first event: milliseconds or a latency shape. */
  firstByte?: number | DelayShape;
  /** Wait between two events (unless an event has its own `gap`). */
  gap?: number | DelayShape;
  faults?: StreamFaultConfig[];
}

export type StreamFormat = 'sse' | 'ndjson' | 'chunks';
export const STREAM_PRESETS = ['openai-chat', 'openai-responses', 'anthropic'] as const;
export type StreamPreset = (typeof STREAM_PRESETS)[number];

/** One event: any field may hold `${…}` expressions. */
export interface StreamEventConfig {
  event?: string;
  id?: string;
  /** Text (split into `data:` lines), or any other value (written as one line of JSON). */
  data?: unknown;
  comment?: string;
  /** Wait before this event, in place of the stream's `gap`. */
  gapMs?: number;
}

export type StreamFaultKind = 'cut' | 'reset' | 'error' | 'stall';

/** A stream fault: what happens after `afterEvents` events (or the events due before `afterMs`). */
export interface StreamFaultConfig {
  kind: StreamFaultKind;
  rate: number;
  afterEvents?: number;
  afterMs?: number;
  /** `error`: the error event's data (the preset's usual error when absent). */
  data?: unknown;
  /** `stall`: how long the stream pauses before it goes on. */
  forMs?: number;
}

/** Default pause of a `stall` fault. */
export const DEFAULT_STALL_MS = 30_000;

type Obj = Record<string, unknown>;

function isObject(v: unknown): v is Obj {
  return v !== null && typeof v === 'object' && !Array.isArray(v);
}

/** A duration or a latency shape as the config gives it (validated), in milliseconds. */
export function buildTiming(raw: unknown): number | DelayShape | undefined {
  if (raw === undefined || raw === null) return undefined;
  if (!isObject(raw)) return parseDuration(raw) ?? 0;
  if (raw.median !== undefined)
    return { kind: 'lognormal', medianMs: parseDuration(raw.median) ?? 0, p99Ms: parseDuration(raw.p99) ?? 0 };
  return { kind: 'uniform', minMs: parseDuration(raw.min) ?? 0, maxMs: parseDuration(raw.max) ?? 0 };
}

/**
 * Replaces `${item}` (the whole value, keeping its type) and `${item.a.b}` in `template` by the
 * item's value: `$each` is expanded when the config loads, since its list is written out. Items
 * are literal values: text in them is never read as an expression.
 */
export function substituteItem(template: unknown, item: unknown): unknown {
  if (typeof template === 'string') {
    const whole = /^\$\{\s*item((?:\.[A-Za-z0-9_$-]+)*)\s*\}$/.exec(template);
    if (whole !== null) return literal(readPath(item, whole[1] as string));
    return template.replace(/(\$?)\$\{\s*item((?:\.[A-Za-z0-9_$-]+)*)\s*\}/g, (all, escaped: string, path: string) => {
      if (escaped === '$') return all;
      const value = readPath(item, path);
      return value === undefined || value === null
        ? ''
        : (typeof value === 'string' ? value : JSON.stringify(value)).replaceAll('${', () => '$${');
    });
  }
  if (Array.isArray(template)) return template.map((t) => substituteItem(t, item));
  if (isObject(template))
    return Object.fromEntries(Object.entries(template).map(([k, v]) => [k, substituteItem(v, item)]));
  return template;
}

/** An item's value as literal config: a `${` in its text is written as `$${`, so it is never read as an expression. */
function literal(value: unknown): unknown {
  if (typeof value === 'string') return value.replaceAll('${', () => '$${');
  if (Array.isArray(value)) return value.map(literal);
  if (isObject(value)) return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, literal(v)]));
  return value;
}

function readPath(value: unknown, path: string): unknown {
  let at = value;
  for (const key of path.split('.').slice(1))
    at = isObject(at) && Object.prototype.hasOwnProperty.call(at, key) ? at[key] : undefined;
  return at;
}

/** One raw events entry expanded: each event with the path of the entry it came from. */
export interface ExpandedEvent {
  raw: Obj;
  /** Index in the configured `events` list. */
  from: number;
}

/** Expands the `events` list: an entry with `$each: [...]` gives one event per item. */
export function expandEvents(raw: unknown): ExpandedEvent[] {
  if (!Array.isArray(raw)) return [];
  const out: ExpandedEvent[] = [];
  raw.forEach((entry: unknown, from) => {
    if (!isObject(entry)) return;
    if (!Array.isArray(entry.$each)) return void out.push({ raw: entry, from });
    const { $each, ...template } = entry;
    for (const item of $each as unknown[]) out.push({ raw: substituteItem(template, item) as Obj, from });
  });
  return out;
}

/** The loaded form of a validated `stream:` mapping. */
export function buildStream(raw: Obj): StreamConfig {
  const preset = typeof raw.preset === 'string' ? (raw.preset as StreamPreset) : undefined;
  const stream: StreamConfig = {
    format: preset !== undefined ? 'sse' : ((raw.format as StreamFormat | undefined) ?? 'sse'),
    events: expandEvents(raw.events).map(({ raw: e }) => buildEvent(e)),
  };
  if (preset !== undefined) {
    stream.preset = preset;
    stream.text = typeof raw.text === 'string' ? raw.text : '';
    stream.chunkBy = raw.chunkBy === 'char' || typeof raw.chunkBy === 'number' ? raw.chunkBy : 'word';
    if (typeof raw.model === 'string') stream.model = raw.model;
    if (typeof raw.finishReason === 'string') stream.finishReason = raw.finishReason;
  }
  const firstByte = buildTiming(raw.firstByte);
  if (firstByte !== undefined) stream.firstByte = firstByte;
  const gap = buildTiming(raw.gap);
  if (gap !== undefined) stream.gap = gap;
  if (Array.isArray(raw.faults) && raw.faults.length > 0) stream.faults = raw.faults.map((f) => buildFault(f as Obj));
  return stream;
}

function buildEvent(raw: Obj): StreamEventConfig {
  const event: StreamEventConfig = {};
  if (typeof raw.event === 'string') event.event = raw.event;
  if (raw.id !== undefined && raw.id !== null) event.id = String(raw.id);
  if (Object.prototype.hasOwnProperty.call(raw, 'data')) event.data = raw.data;
  if (typeof raw.comment === 'string') event.comment = raw.comment;
  if (raw.gap !== undefined) event.gapMs = parseDuration(raw.gap) ?? 0;
  return event;
}

function buildFault(raw: Obj): StreamFaultConfig {
  const fault: StreamFaultConfig = { kind: raw.kind as StreamFaultKind, rate: parseFailRate(raw.rate) ?? 0 };
  if (typeof raw.after === 'number') fault.afterEvents = raw.after;
  else if (typeof raw.after === 'string') fault.afterMs = parseDuration(raw.after) ?? 0;
  if (Object.prototype.hasOwnProperty.call(raw, 'data')) fault.data = raw.data;
  if (fault.kind === 'stall')
    fault.forMs = raw.for === undefined ? DEFAULT_STALL_MS : (parseDuration(raw.for) ?? DEFAULT_STALL_MS);
  return fault;
}
