import type { MeterUsage, Usage } from './api.js';
import { byId, h } from './dom.js';
import { nextMonth } from './trace.js';

/** Draws both gauges from one `/__mockapi/usage` answer, as it is: nothing is counted here. */
export function renderGauges(usage: Usage): void {
  const rate = usage.rateLimit;
  if (rate === null) drawGauge('gauge-rate', undefined, undefined, 'no rate limit configured');
  else {
    const used = rate.limit - rate.remaining;
    const note =
      rate.remaining === 0
        ? `full — next slot in ${rate.resetSeconds} s`
        : used === 0
          ? 'empty'
          : `${rate.remaining} free — next slot frees in ${rate.resetSeconds} s`;
    drawGauge('gauge-rate', used, rate.limit, note);
  }
  const reset = `resets ${nextMonth(usage.month, true)}`;
  if (usage.quota === null)
    drawGauge(
      'gauge-quota',
      usage.requests,
      undefined,
      `${usage.requests.toLocaleString()} counted in ${usage.month}; no quota`,
    );
  else
    drawGauge('gauge-quota', usage.requests, usage.quota, `${(usage.remaining ?? 0).toLocaleString()} left · ${reset}`);
  renderMeters(usage.meters);
  renderKeys(usage);
}

/** One gauge per meter of the default key (tokens, spend…): what its window, month or total holds. */
function renderMeters(meters: Record<string, MeterUsage> | undefined): void {
  const box = byId('meter-gauges');
  box.replaceChildren();
  for (const [name, m] of Object.entries(meters ?? {})) {
    const id = `gauge-meter-${name}`;
    const per =
      m.window === 'month' ? `in ${m.month ?? 'this month'}` : m.window === 'total' ? 'in total' : `per ${m.window}`;
    const label = h('div', { class: 'gauge-label' }, `${name} ${per} `, h('span', { class: 'gauge-value' }));
    box.append(
      h(
        'div',
        { class: 'gauge', id, role: 'meter', 'aria-label': `Meter ${name}`, 'aria-valuemin': '0' },
        label,
        h('div', { class: 'bar' }, h('span')),
        h('div', { class: 'gauge-note muted' }),
      ),
    );
    const spent = m.remaining <= 0;
    const note =
      m.window === 'total'
        ? spent
          ? 'spent — never resets by itself'
          : `${m.remaining.toLocaleString()} left`
        : m.window === 'month'
          ? `${m.remaining.toLocaleString()} left · resets ${m.month === undefined ? 'next month' : nextMonth(m.month, true)}`
          : m.used === 0
            ? 'empty'
            : `${m.remaining.toLocaleString()} free — oldest leaves in ${m.resetSeconds} s`;
    drawGauge(id, m.used, m.limit, note);
  }
}

/** One line per key of `keys:` (by name, never the key): its month and its window. The gauges above are the `default` key's. */
function renderKeys(usage: Usage): void {
  const list = byId('key-usage');
  const keys = usage.keys;
  list.hidden = keys === undefined;
  list.replaceChildren();
  if (keys === undefined) return;
  for (const [name, k] of Object.entries(keys)) {
    const month =
      k.quota === null
        ? `${k.requests.toLocaleString()} this month`
        : `${k.requests.toLocaleString()} / ${k.quota.toLocaleString()} this month`;
    const window =
      k.rateLimit === null
        ? 'no rate limit'
        : `window ${k.rateLimit.limit - k.rateLimit.remaining} / ${k.rateLimit.limit}`;
    const meters = Object.entries(k.meters ?? {})
      .map(
        ([meter, m]) =>
          ` · ${meter} ${m.used.toLocaleString()} / ${m.limit.toLocaleString()} ${m.window === 'month' || m.window === 'total' ? m.window : `per ${m.window}`}`,
      )
      .join('');
    list.append(
      h('li', null, `key ${name}${k.plan === null ? '' : ` (plan ${k.plan})`}: ${month} · ${window}${meters}`),
    );
  }
}

function drawGauge(id: string, used: number | undefined, max: number | undefined, note: string): void {
  const el = byId(id);
  const value = el.querySelector('.gauge-value') as HTMLElement;
  const bar = el.querySelector('.bar') as HTMLElement;
  const fill = bar.firstElementChild as HTMLElement;
  value.textContent =
    used === undefined
      ? '—'
      : max === undefined
        ? used.toLocaleString()
        : `${used.toLocaleString()} / ${max.toLocaleString()}`;
  const ratio = used !== undefined && max !== undefined && max > 0 ? Math.min(1, used / max) : 0;
  fill.style.width = `${(ratio * 100).toFixed(1)}%`;
  bar.classList.toggle('high', ratio >= 0.8 && ratio < 1);
  bar.classList.toggle('full', ratio >= 1);
  if (max !== undefined) el.setAttribute('aria-valuemax', String(max));
  if (used !== undefined) el.setAttribute('aria-valuenow', String(used));
  el.setAttribute('aria-valuetext', `${value.textContent}; ${note}`);
  (el.querySelector('.gauge-note') as HTMLElement).textContent = note;
}
