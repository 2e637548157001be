import { monthOf } from './state-file.js';

/** Above this many buckets, neighbours are merged: after a long run of failed writes, memory stays bounded. */
const MAX_BUCKETS = 4096;

/** Where `PendingCounts` stood when a write took its counts; see `mark()`. */
export interface PendingMark {
  readonly epoch: number;
  readonly length: number;
  readonly last: number;
}

/**
 * Requests a server admitted and has not yet added to the shared state file, by the millisecond
 * they were admitted: a reset or an edit made at time T drops what was admitted before T and keeps
 * what came after, whenever the server learns of it. One bucket per distinct millisecond, so
 * counting a request is a comparison and an increment.
 */
export class PendingCounts {
  private times: number[] = [];
  private counts: number[] = [];
  /** Bumped when counts are dropped, so a write that marked them before does not remove others. */
  private epoch = 0;
  /** A write is under way with the counts up to this mark. */
  private outstanding: PendingMark | undefined;

  get isEmpty(): boolean {
    return this.times.length === 0;
  }

  /** Counts `n` (default 1) requests admitted at `time`. */
  add(time: number, n = 1): void {
    const last = this.times.length - 1;
    if (last >= 0 && this.times[last] === time) {
      this.counts[last]! += n;
      return;
    }
    if (last + 1 >= MAX_BUCKETS && this.outstanding === undefined) this.halve();
    this.times.push(time);
    this.counts.push(n);
  }

  /** Requests pending in `month` (`YYYY-MM`). */
  inMonth(month: string): number {
    let sum = 0;
    for (let i = 0; i < this.times.length; i++) if (monthOf(this.times[i]!) === month) sum += this.counts[i]!;
    return sum;
  }

  /** Drops the requests admitted before `time`; returns how many. */
  dropBefore(time: number): number {
    let dropped = 0;
    const times: number[] = [];
    const counts: number[] = [];
    for (let i = 0; i < this.times.length; i++) {
      if (this.times[i]! < time) dropped += this.counts[i]!;
      else {
        times.push(this.times[i]!);
        counts.push(this.counts[i]!);
      }
    }
    if (dropped > 0) {
      this.times = times;
      this.counts = counts;
      this.epoch++;
    }
    return dropped;
  }

  clear(): void {
    this.times = [];
    this.counts = [];
    this.epoch++;
  }

  /** What is pending now, as a write takes it; `settle` then removes exactly that if it was written. */
  mark(): PendingMark {
    this.outstanding = { epoch: this.epoch, length: this.times.length, last: this.counts[this.counts.length - 1] ?? 0 };
    return this.outstanding;
  }

  /** Ends the write that took `mark`: when `written`, its counts are no longer pending; what came since stays. */
  settle(mark: PendingMark, written: boolean): void {
    this.outstanding = undefined;
    if (!written || mark.epoch !== this.epoch || mark.length === 0) return; // (cleared meanwhile: already gone)
    const lastIndex = mark.length - 1;
    this.counts[lastIndex]! -= mark.last; // the last bucket may have grown since the mark
    const keepFrom = this.counts[lastIndex] === 0 ? mark.length : lastIndex;
    this.times.splice(0, keepFrom);
    this.counts.splice(0, keepFrom);
  }

  /** Merges neighbouring buckets under the later time: a reset then keeps, never drops, a request admitted after it. */
  private halve(): void {
    const times: number[] = [];
    const counts: number[] = [];
    for (let i = 0; i < this.times.length; i += 2) {
      const next = i + 1 < this.times.length;
      times.push(next ? Math.max(this.times[i]!, this.times[i + 1]!) : this.times[i]!);
      counts.push(this.counts[i]! + (next ? this.counts[i + 1]! : 0));
    }
    this.times = times;
    this.counts = counts;
    this.epoch++;
  }
}
