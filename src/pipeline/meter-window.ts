/**
 * An exact sliding window of amounts (a meter's `1m` window): what was admitted at each millisecond,
 * oldest first, and their sum. A request is admitted at `t` iff the amounts admitted in
 * `(t - window, t]` plus its own fit the limit, so no interval of length `window` ever holds more
 * than `limit` at admission (a settle may take it over afterwards, as the real APIs do).
 *
 * Amounts are integers (millionths, see METER_SCALE), so sums are exact. Admissions of the same
 * millisecond share one slot, so memory follows the distinct times the window holds. A settle
 * corrects the slot of its admission, found by its time, while that slot is still in the window:
 * a refund then leaves the window with the reservation it corrects, never later.
 */
export interface AmountWindow {
  /** Drops what left the window at `now` (or the latest time seen: time never goes back) and returns the sum held. */
  used(windowMs: number, now: number): number;
  /** Adds `amount` at `now` (after `used` at the same time); returns the sum held. */
  add(amount: number, now: number): number;
  /** Adds `delta` to what was admitted at `at`, when that is still held; returns whether it was. */
  correct(at: number, delta: number): boolean;
  /**
   * Milliseconds from `now` until `amount` fits `limit` (what leaves the window by then makes room);
   * 0 when it fits now. `used` at `now` first.
   */
  fitsIn(amount: number, limit: number, windowMs: number, now: number): number;
  /** Milliseconds from `now` until the oldest amount held leaves; 0 when nothing is held. */
  resetIn(windowMs: number, now: number): number;
  /** Empties the window. */
  clear(): void;
}

const MIN_CAPACITY = 16;

/** Creates an empty window. */
export function createAmountWindow(): AmountWindow {
  let times = new Float64Array(MIN_CAPACITY);
  let amounts = new Float64Array(MIN_CAPACITY);
  let mask = MIN_CAPACITY - 1;
  let head = 0;
  let size = 0;
  let sum = 0;
  let latest = -Infinity;

  const slot = (i: number): number => (head + i) & mask;

  function grow(): void {
    const capacity = times.length * 2;
    const nextTimes = new Float64Array(capacity);
    const nextAmounts = new Float64Array(capacity);
    for (let i = 0; i < size; i++) {
      nextTimes[i] = times[slot(i)]!;
      nextAmounts[i] = amounts[slot(i)]!;
    }
    times = nextTimes;
    amounts = nextAmounts;
    mask = capacity - 1;
    head = 0;
  }

  function trim(windowMs: number, now: number): number {
    const t = now > latest ? (latest = now) : latest;
    const edge = t - windowMs;
    while (size > 0 && times[head]! <= edge) {
      sum -= amounts[head]!;
      head = slot(1);
      size--;
    }
    if (size === 0) sum = 0;
    return t;
  }

  return {
    used(windowMs, now) {
      trim(windowMs, now);
      return sum;
    },
    add(amount, now) {
      const t = now > latest ? (latest = now) : latest;
      if (size > 0 && times[slot(size - 1)] === t) amounts[slot(size - 1)] = amounts[slot(size - 1)]! + amount;
      else {
        if (size === times.length) grow();
        times[slot(size)] = t;
        amounts[slot(size)] = amount;
        size++;
      }
      sum += amount;
      return sum;
    },
    correct(at, delta) {
      // Most settles follow their admission closely: the newest slot first.
      if (size > 0 && times[slot(size - 1)] === at) {
        amounts[slot(size - 1)] = amounts[slot(size - 1)]! + delta;
        sum += delta;
        return true;
      }
      // Binary search over the held slots, oldest first (times only grow).
      let low = 0;
      let high = size - 1;
      while (low <= high) {
        const mid = (low + high) >> 1;
        const time = times[slot(mid)]!;
        if (time === at) {
          amounts[slot(mid)] = amounts[slot(mid)]! + delta;
          sum += delta;
          return true;
        }
        if (time < at) low = mid + 1;
        else high = mid - 1;
      }
      return false;
    },
    fitsIn(amount, limit, windowMs, now) {
      const t = trim(windowMs, now);
      if (sum + amount <= limit) return 0;
      let left = sum;
      for (let i = 0; i < size; i++) {
        left -= amounts[slot(i)]!;
        if (left + amount <= limit) return Math.max(1, times[slot(i)]! + windowMs - t);
      }
      return Math.max(1, windowMs); // (only an amount over the whole limit, which is refused before)
    },
    resetIn(windowMs, now) {
      const t = trim(windowMs, now);
      return size === 0 ? 0 : Math.max(0, times[head]! + windowMs - t);
    },
    clear() {
      times = new Float64Array(MIN_CAPACITY);
      amounts = new Float64Array(MIN_CAPACITY);
      mask = MIN_CAPACITY - 1;
      head = size = sum = 0;
    },
  };
}
