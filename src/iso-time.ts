/** The furthest from the epoch a Date can be, either way. */
const MAX_DATE_MS = 8.64e15;
let isoSecond = NaN;
let isoPrefix = '';

/**
 * `time` (ms since the epoch) as `Date#toISOString` writes it (`2026-01-01T00:00:00.123Z`), the
 * date part made once a second: that call costs about a microsecond (several on a busy server),
 * and journal entries, JSON log lines and deliveries each stamp one. Never throws: a time past
 * what a Date holds (or NaN) is written as the nearest one it holds.
 */
export function isoTime(time: number): string {
  if (!(Math.abs(time) <= MAX_DATE_MS)) time = Number.isNaN(time) ? 0 : Math.sign(time) * MAX_DATE_MS;
  time = Math.trunc(time); // as a Date keeps it: -1.5 is -1, 1.7 is 1
  const second = Math.floor(time / 1000);
  if (second !== isoSecond) {
    const text = new Date(time).toISOString();
    if (text.length !== 24) return text; // years past 9999 (or before 0) write more digits
    isoSecond = second;
    isoPrefix = text.slice(0, 20);
  }
  const ms = time - second * 1000;
  return `${isoPrefix}${ms < 10 ? '00' : ms < 100 ? '0' : ''}${ms}Z`;
}
