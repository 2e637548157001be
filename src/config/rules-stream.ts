import type { ExpressionOptions } from '../expression/compile.js';
import { compileString } from '../expression/string-template.js';
import { compileTemplate, isStatic } from '../expression/template.js';
import type { FieldPath } from './field-path.js';
import { describeValue } from './issues.js';
import { checkDuration, type RuleContext } from './rule-kit.js';
import { checkDelay } from './rules-resilience.js';
import { parseFailRate } from './units.js';
import { expandEvents, STREAM_PRESETS, type StreamPreset } from './stream-model.js';
import { chunkText, presetEventCount } from './stream-text.js';

/**
 * The rules of `stream:` a schema cannot express: `stream` beside nothing else that makes content,
 * a preset's options against explicit events' options, SSE-only fields in other formats, every
 * `${…}` compiled, timings that are durations or latency shapes, fault fields that belong to one
 * kind, rates that add up to at most 1, and a fault `after` within the stream's events.
 */

type Obj = Record<string, unknown>;

function isObject(v: unknown): v is Obj {
  return v !== null && typeof v === 'object' && !Array.isArray(v);
}

const PRESET_ONLY = ['text', 'chunkBy', 'model', 'finishReason'] as const;
const EXPLICIT_ONLY = ['format', 'events'] as const;
const SSE_ONLY = ['event', 'id', 'comment'] as const;
const FAULT_FIELDS: Record<string, string> = { data: 'error', for: 'stall' };

/** Checks the `stream` of the leaf at `leafPath`; `options` are the endpoint's expression options. */
export function checkStream(ctx: RuleContext, leafPath: FieldPath, leaf: Obj, options: ExpressionOptions): void {
  const stream = leaf.stream;
  const base = [...leafPath, 'stream'];
  if (!isObject(stream) || ctx.issues.has(base)) return;
  const { issues } = ctx;
  const report = (path: FieldPath, message: string, atKey = false): void => {
    if (!issues.has(path)) issues.report(path, message, atKey ? issues.locator.keyAt(path) : undefined);
  };
  if (typeof leaf.status === 'number' && (leaf.status < 200 || leaf.status === 204 || leaf.status === 304)) {
    report(
      [...leafPath, 'status'],
      `is ${leaf.status}, an answer without a body: it cannot carry a stream; use a status such as 200`,
    );
  }
  const preset =
    typeof stream.preset === 'string' && (STREAM_PRESETS as readonly string[]).includes(stream.preset)
      ? (stream.preset as StreamPreset)
      : undefined;
  if (stream.preset !== undefined) {
    for (const field of EXPLICIT_ONLY) {
      if (stream[field] !== undefined)
        report(
          [...base, field],
          `is not an option of preset ${String(stream.preset)} (its options: text, chunkBy, model, finishReason, firstByte, gap, faults); remove it, or drop \`preset\` to write the events yourself`,
          true,
        );
    }
  } else {
    for (const field of PRESET_ONLY) {
      if (stream[field] !== undefined)
        report(
          [...base, field],
          'only applies with a `preset` (openai-chat, openai-responses, anthropic); explicit streams list `events`',
          true,
        );
    }
    if (stream.events === undefined) report(base, 'needs `preset` (with `text`) or `events`');
  }
  for (const field of ['firstByte', 'gap']) {
    if (stream[field] === undefined) continue;
    if (isObject(stream[field])) checkDelay(ctx, [...base, field], stream[field]);
    else checkDuration(ctx, [...base, field], stream[field], false);
  }
  const expression = (path: FieldPath, text: unknown, exact: boolean): void => {
    if (typeof text !== 'string' || issues.has(path)) return;
    const result = compileString(text, options);
    if (!result.ok)
      issues.report(
        path,
        result.issue.message,
        exact && result.issue.offset !== undefined ? issues.locator.textAt(path, result.issue.offset) : undefined,
      );
  };

  let count: number | undefined;
  if (preset !== undefined) {
    expression([...base, 'text'], stream.text, true);
    const text = typeof stream.text === 'string' ? stream.text : '';
    if (!text.includes('${'))
      count = presetEventCount(
        preset,
        chunkText(text, typeof stream.chunkBy === 'number' || stream.chunkBy === 'char' ? stream.chunkBy : 'word')
          .length,
      );
  } else if (Array.isArray(stream.events)) {
    const format = typeof stream.format === 'string' ? stream.format : 'sse';
    const expanded = expandEvents(stream.events);
    count = expanded.length;
    for (const { raw, from } of expanded) {
      const entry = stream.events[from] as Obj;
      const exact = !Array.isArray(entry.$each); // an expanded item's text is not the text in the file
      const at = [...base, 'events', from];
      for (const field of SSE_ONLY) {
        if (raw[field] !== undefined && format !== 'sse')
          report([...at, field], `only applies to format sse, not ${format}; remove it`, true);
        else if (field !== 'id') expression([...at, field], raw[field], exact);
      }
      if (typeof raw.id === 'string') expression([...at, 'id'], raw.id, exact);
      if (raw.gap !== undefined) checkDuration(ctx, [...at, 'gap'], raw.gap, false);
      if (raw.data !== undefined && !isStatic(raw.data) && !issues.has([...at, 'data'])) {
        const compiled = compileTemplate(raw.data, { ...options, path: [...at, 'data'] });
        if (!compiled.ok) {
          for (const issue of compiled.issues) {
            const position =
              exact && issue.offset !== undefined ? issues.locator.textAt(issue.path, issue.offset) : undefined;
            if (!issues.has(issue.path)) issues.report(issue.path, issue.message, position);
          }
        }
      }
    }
  }
  checkStreamFaults(ctx, [...base, 'faults'], stream.faults, count);
}

function checkStreamFaults(ctx: RuleContext, path: FieldPath, faults: unknown, count: number | undefined): void {
  if (!Array.isArray(faults)) return;
  const { issues } = ctx;
  let total = 0;
  faults.forEach((fault: unknown, i) => {
    if (!isObject(fault)) return;
    const at = [...path, i];
    const rate = parseFailRate(fault.rate);
    if (rate === undefined && typeof fault.rate === 'string' && !issues.has([...at, 'rate']))
      issues.report([...at, 'rate'], `must be a percentage from 0% to 100%, got ${describeValue(fault.rate)}`);
    total += rate ?? 0;
    for (const [field, kind] of Object.entries(FAULT_FIELDS)) {
      const fieldAt = [...at, field];
      if (fault[field] === undefined || issues.has(fieldAt) || typeof fault.kind !== 'string' || fault.kind === kind)
        continue;
      issues.report(
        fieldAt,
        `only applies to kind ${kind}, not ${fault.kind}; remove it`,
        issues.locator.keyAt(fieldAt),
      );
    }
    if (fault.for !== undefined) checkDuration(ctx, [...at, 'for'], fault.for, false);
    if (typeof fault.after === 'string') checkDuration(ctx, [...at, 'after'], fault.after, false);
    if (
      typeof fault.after === 'number' &&
      count !== undefined &&
      fault.after > count &&
      !issues.has([...at, 'after'])
    ) {
      issues.report(
        [...at, 'after'],
        `is ${fault.after} events, but the stream has only ${count}; use a number from 0 to ${count}`,
      );
    }
  });
  if (Math.round(total * 1e6) > 1e6 && !issues.has(path)) {
    issues.report(
      path,
      `rates add up to ${+(total * 100).toFixed(4)}%, more than 100% (a request gets at most one fault); lower them`,
    );
  }
}
