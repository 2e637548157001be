import { framePreset } from './preset-frame.js';
import { presetParts, type PlainEvent, type PresetVars } from './presets.js';
import type { StreamPreset } from '../config/stream-model.js';

/** Which of a request's values a slot of a framed event takes. */
type Slot = 'id' | 'created' | 'model' | 'inputTokens' | 'totalTokens';

/** Stand-ins framed in place of a request's values; their escaped forms mark the slots. */
const STAND_IN: PresetVars = {
  id: '\u0001mockapi stream id\u0001',
  created: 4_000_000_000_017,
  model: '\u0001mockapi model\u0001',
  inputTokens: 4_000_000_000_029,
};
/**
 * Other values, framed both ways to check the cut: a stand-in that also appears in the fixed text
 * (or a value written other than as escaped JSON) would show here as a difference.
 */
const CHECK: PresetVars = {
  id: 'chk"\\\n\u2028',
  created: -17,
  model: 'a "model"\r\nwith\u0000lines 😀 </script>',
  inputTokens: 29,
};

/** One framed event cut at its slots: `text.length === slots.length + 1`. */
interface EventPieces {
  readonly text: readonly string[];
  readonly slots: readonly Slot[];
}

/** A preset stream whose text is fixed, framed once: each request fills in its id, time and model. */
export interface PresetTemplate {
  /** How many events the stream has. */
  readonly count: number;
  /** The stream's events framed for `vars`, byte for byte what framing each event gives. */
  fill(vars: PresetVars): string[];
  /** The same, one event at a time, as it is sent. */
  filler(vars: PresetVars): (i: number) => string;
  /** The characters of all the events framed for `vars`, without framing them. */
  length(vars: PresetVars): number;
}

/** How a value appears inside framed JSON (a string's text escaped without its quotes, a number as JSON). */
function escaped(slot: Slot, vars: PresetVars, outputs: number): string {
  if (slot === 'created') return JSON.stringify(vars.created);
  if (slot === 'inputTokens') return JSON.stringify(vars.inputTokens ?? 1);
  // The usage's total: the prompt's tokens and the answer's (its chunks).
  if (slot === 'totalTokens') return JSON.stringify((vars.inputTokens ?? 1) + outputs);
  const json = JSON.stringify(vars[slot]);
  return json.slice(1, -1);
}

const SLOTS: readonly Slot[] = ['id', 'created', 'model', 'inputTokens', 'totalTokens'];

function cut(framed: string, outputs: number): EventPieces {
  const marks = SLOTS.map((slot) => escaped(slot, STAND_IN, outputs));
  const text: string[] = [];
  const slots: Slot[] = [];
  let at = 0;
  for (;;) {
    let where = -1;
    let which = 0;
    marks.forEach((mark, i) => {
      const found = framed.indexOf(mark, at);
      if (found >= 0 && (where < 0 || found < where)) [where, which] = [found, i];
    });
    if (where < 0) break;
    text.push(framed.slice(at, where));
    slots.push(SLOTS[which] as Slot);
    at = where + (marks[which] as string).length;
  }
  text.push(framed.slice(at));
  return { text, slots };
}

function fillEvent(pieces: EventPieces, values: Record<Slot, string>): string {
  let out = pieces.text[0] as string;
  for (let i = 0; i < pieces.slots.length; i++) out += values[pieces.slots[i] as Slot] + (pieces.text[i + 1] as string);
  return out;
}

/** The escaped values of every slot for `vars`. */
function valuesOf(vars: PresetVars, outputs: number): Record<Slot, string> {
  return {
    id: escaped('id', vars, outputs),
    created: escaped('created', vars, outputs),
    model: escaped('model', vars, outputs),
    inputTokens: escaped('inputTokens', vars, outputs),
    totalTokens: escaped('totalTokens', vars, outputs),
  };
}

function fillAll(events: readonly EventPieces[], vars: PresetVars, outputs: number): string[] {
  const values = valuesOf(vars, outputs);
  return events.map((pieces) => fillEvent(pieces, values));
}

/**
 * Frames a preset stream of fixed `chunks` once, at load, with stand-ins for the values that
 * change per request (the stream's id, the time, the request's model), and cuts each event at
 * them: a request then costs a few concatenations an event instead of framing each one. Checked
 * here by framing other values both ways; undefined (framed per request) if they differ.
 */
export function presetTemplate(
  preset: StreamPreset,
  chunks: readonly string[],
  finishReason: string | undefined,
  frame: (event: PlainEvent) => string,
  includeUsage = false,
): PresetTemplate | undefined {
  const outputs = chunks.length;
  const framed = (vars: PresetVars): string[] =>
    framePreset(presetParts(preset, chunks, { ...vars, includeUsage }, finishReason), chunks, frame);
  const events = framed(STAND_IN).map((event) => cut(event, outputs));
  const expected = framed(CHECK);
  const got = fillAll(events, CHECK, outputs);
  if (got.length !== expected.length || got.some((event, i) => event !== expected[i])) return undefined;
  const fixedChars = events.reduce((sum, e) => sum + e.text.reduce((n, t) => n + t.length, 0), 0);
  const slotCounts = { id: 0, created: 0, model: 0, inputTokens: 0, totalTokens: 0 };
  for (const e of events) for (const slot of e.slots) slotCounts[slot]++;
  return {
    count: events.length,
    length(vars) {
      return fixedChars + SLOTS.reduce((sum, slot) => sum + slotCounts[slot] * escaped(slot, vars, outputs).length, 0);
    },
    fill: (vars) => fillAll(events, vars, outputs),
    filler(vars) {
      const values = valuesOf(vars, outputs);
      return (i) => fillEvent(events[i] as EventPieces, values);
    },
  };
}
