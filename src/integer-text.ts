/**
 * A number as `String(n)` writes it, faster for a whole number past 2^31: V8
 * writes a small integer from a table, but a larger one (a meter's remaining `9000000000`, a time in
 * milliseconds) through its general number printer. Two small halves are written instead.
 */
export function integerText(n: number): string {
  if (n < 2147483648 || !Number.isSafeInteger(n)) return String(n);
  const high = Math.floor(n / 1e9);
  const low = n - high * 1e9;
  return low >= 1e8 ? `${high}${low}` : `${high}${String(low).padStart(9, '0')}`;
}
