import type { StreamFormat } from '../config/stream-model.js';
import type { PlainEvent } from './presets.js';

/** The content type each format is sent with (a `content-type` header of the answer replaces it). */
export const STREAM_CONTENT_TYPES: Record<StreamFormat, string> = {
  sse: 'text/event-stream; charset=utf-8',
  ndjson: 'application/x-ndjson',
  chunks: 'text/plain; charset=utf-8',
};

const LINE_BREAK = /\r\n|\r|\n/;
/** Line breaks (and NUL, which an `id` must not hold) would end a field early: dropped. */
const NOT_IN_FIELD = /[\r\n\0]/g;

/** Data as text: a string as it is, anything else as one line of JSON. */
function dataText(data: unknown): string {
  return typeof data === 'string' ? data : (JSON.stringify(data) ?? 'null');
}

/**
 * One event in the format's framing. Server-sent events follow the WHATWG framing: a comment is one
 * `:` line per line of it, `event:` and `id:` one line each, text data one `data:` line per line
 * (a client joins them with `\n`), and a blank line ends the event. NDJSON writes the data as one
 * line of JSON; `chunks` writes the data's text and nothing else.
 */
export function frameEvent(format: StreamFormat, event: PlainEvent): string {
  if (format === 'ndjson') return `${JSON.stringify(event.data ?? null)}\n`;
  if (format === 'chunks') return event.data === undefined || event.data === null ? '' : dataText(event.data);
  let out = '';
  if (event.comment !== undefined) for (const line of event.comment.split(LINE_BREAK)) out += `: ${line}\n`;
  if (event.event !== undefined) out += `event: ${event.event.replace(NOT_IN_FIELD, '')}\n`;
  if (event.id !== undefined) out += `id: ${event.id.replace(NOT_IN_FIELD, '')}\n`;
  if (typeof event.data === 'string') for (const line of event.data.split(LINE_BREAK)) out += `data: ${line}\n`;
  else if (event.data !== undefined) out += `data: ${dataText(event.data)}\n`; // JSON has no raw line breaks: one line
  return `${out}\n`;
}
