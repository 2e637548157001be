import type { Entry } from './api.js';
import { h, type Child } from './dom.js';

const SVG = 'http://www.w3.org/2000/svg';
const WIDTH = 1000;

function svg(tag: string, attrs: Record<string, string | number>, text?: string): SVGElement {
  const el = document.createElementNS(SVG, tag);
  for (const [name, value] of Object.entries(attrs)) el.setAttribute(name, String(value));
  if (text !== undefined) el.textContent = text;
  return el;
}

/** Words for how a stream ended. */
const ENDED: Record<string, string> = {
  complete: 'complete',
  cut: 'cut (clean end without the final events)',
  reset: 'reset (TCP reset)',
  error: 'error event',
  client: 'the client left',
};

/**
 * A streamed answer's timeline: the wait before the first byte, the time events were being sent,
 * and how the stream ended, drawn to scale from the journal's `stream` field. Nothing for other answers.
 */
export function streamTimeline(entry: Entry): Child[] {
  const s = entry.stream;
  if (s === undefined) return [];
  const total = Math.max(s.ms, 0.01);
  const first = s.firstByteMs === null ? total : Math.min(s.firstByteMs, total);
  const x = (ms: number): number => Math.round((ms / total) * WIDTH);
  const chart = svg('svg', {
    viewBox: `0 0 ${WIDTH} 34`,
    width: '100%',
    height: 34,
    role: 'img',
    'aria-label': 'stream timeline',
    class: 'stream-chart',
  });
  chart.append(
    svg('rect', { x: 0, y: 4, width: Math.max(x(first), 1), height: 14, class: 'wait' }),
    svg('rect', { x: x(first), y: 4, width: Math.max(WIDTH - x(first), 0), height: 14, class: `flow ${s.ended}` }),
    svg('text', { x: 2, y: 31, class: 'tick' }, '0'),
    svg(
      'text',
      { x: Math.min(x(first), WIDTH - 200), y: 31, class: 'tick' },
      s.firstByteMs === null ? 'no first byte' : `first byte ${s.firstByteMs} ms`,
    ),
    svg('text', { x: WIDTH - 2, y: 31, class: 'tick end' }, `${s.ms} ms`),
  );
  const progress = h('progress', { max: Math.max(s.events, 1), value: s.sent, id: 'stream-progress' });
  return [
    h('h3', null, 'Stream'),
    h(
      'p',
      { id: 'stream-summary' },
      `${s.sent} of ${s.events} events sent · ended: ${ENDED[s.ended] ?? s.ended} · first byte ${s.firstByteMs === null ? '—' : `${s.firstByteMs} ms`} · ${s.ms} ms in all`,
    ),
    h('div', { class: 'stream-timeline', id: 'stream-timeline' }, chart, progress),
  ];
}
