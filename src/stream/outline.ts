import type { DelayShape } from '../config/units.js';
import type { StreamConfig, StreamFaultConfig, StreamFormat } from '../config/stream-model.js';
import { DEFAULT_MODEL, presetEvents, type PlainEvent, type PresetVars } from './presets.js';
import { chunkText } from '../config/stream-text.js';

/** A stream as `GET /__mockapi/endpoints` shows it: a preset expanded into the events it sends. */
export interface StreamOutline {
  format: StreamFormat;
  preset?: string;
  /** The events in order; a preset's per-stream values (id, time, model) are shown as `<…>` placeholders. */
  events: PlainEvent[];
  firstByte?: number | DelayShape;
  gap?: number | DelayShape;
  faults?: StreamFaultConfig[];
}

/** The expansion of `stream` for the endpoints listing (and the inspector). */
export function streamOutline(stream: StreamConfig): StreamOutline {
  const outline: StreamOutline = { format: stream.format, events: stream.events };
  if (stream.preset !== undefined) {
    outline.preset = stream.preset;
    const vars = {
      id: '<random per stream>',
      created: '<request time, seconds>',
      model: `<the request's model, else ${stream.model ?? DEFAULT_MODEL}>`,
    } as unknown as PresetVars;
    const text = stream.text ?? '';
    // Text with expressions is split per request: shown whole, as one chunk.
    const chunks = text.includes('${') ? [text] : chunkText(text, stream.chunkBy);
    outline.events = presetEvents(stream.preset, chunks, vars, stream.finishReason);
  }
  if (stream.firstByte !== undefined) outline.firstByte = stream.firstByte;
  if (stream.gap !== undefined) outline.gap = stream.gap;
  if (stream.faults !== undefined) outline.faults = stream.faults;
  return outline;
}
