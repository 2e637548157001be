import type { Scrubber } from './scrub.js';

/** One recorded server-sent event as a `stream:` event of the config (before `${` escaping). */
export interface RecordedEvent {
  event?: string;
  id?: string;
  data?: string;
  comment?: string;
}

/**
 * Reads an event stream's text as the WHATWG server-sent events parser does: lines end with CRLF,
 * LF or CR; `field: value` (one space after the colon dropped); `data` lines of one event joined
 * with a line break; a blank line ends an event; unknown fields (and `retry`) are ignored. Unlike
 * a browser it keeps comments (`: ping`) and events without data, so a replay sends them too. An
 * event the stream broke off before its blank line is left out, as a client would drop it.
 */
export function parseEventStream(text: string): RecordedEvent[] {
  const events: RecordedEvent[] = [];
  let current: RecordedEvent = {};
  let data: string[] | undefined;
  let open = false;
  const lines = text.replace(/^\uFEFF/, '').split(/\r\n|\r|\n/);
  // The text after the last line break is an unfinished line: not part of any event.
  lines.pop();
  for (const line of lines) {
    if (line === '') {
      if (open) events.push(data === undefined ? current : { ...current, data: data.join('\n') });
      current = {};
      data = undefined;
      open = false;
      continue;
    }
    open = true;
    const colon = line.indexOf(':');
    const field = colon === -1 ? line : line.slice(0, colon);
    let value = colon === -1 ? '' : line.slice(colon + 1);
    if (value.startsWith(' ')) value = value.slice(1);
    if (field === '') current.comment = current.comment === undefined ? value : `${current.comment}\n${value}`;
    else if (field === 'data') (data ??= []).push(value);
    else if (field === 'event') current.event = value;
    else if (field === 'id' && !value.includes('\0')) current.id = value;
  }
  return events;
}

/** Event data: its secret-named fields redacted when it is JSON (whatever its layout), its layout kept. */
function scrubData(data: string, scrub: Scrubber): string {
  return scrub.jsonText(data);
}

/**
 * A recorded `text/event-stream` answer as a `stream:` of explicit events in the `sse` format:
 * each event's data verbatim (text, never re-read as JSON, so a replay sends the same `data:`
 * lines), redacted; no waits (a replay sends every event at once). Undefined for a stream without
 * any event.
 */
export function streamOf(text: string, scrub: Scrubber): { format: 'sse'; events: RecordedEvent[] } | undefined {
  const events = parseEventStream(text).map((e) => {
    const out: RecordedEvent = {};
    if (e.comment !== undefined) out.comment = scrub.text(e.comment);
    if (e.event !== undefined) out.event = scrub.text(e.event);
    if (e.id !== undefined) out.id = scrub.text(e.id);
    if (e.data !== undefined) out.data = scrubData(e.data, scrub);
    return out;
  });
  return events.length === 0 ? undefined : { format: 'sse', events };
}
