import { monthOf } from './state-file.js';
import type { UsageStore } from './usage-store.js';

/**
 * A month's request count kept in memory alone, with nothing to write or re-read: what a named
 * session counts (src/sessions), a few numbers per session where the state file's store keeps its
 * write machinery. Its methods live on the prototype, so ten thousand of them cost ten thousand
 * small objects.
 */
export class MonthCount implements UsageStore {
  readonly file = undefined;
  private month = '';
  private requests = 0;

  count(now: number): number {
    return monthOf(now) === this.month ? this.requests : 0;
  }

  increment(now: number): number {
    this.roll(now);
    return ++this.requests;
  }

  reset(now: number): void {
    this.set(now, 0);
  }

  /** In memory only: as {@link reset}. */
  async followReset(now: number): Promise<void> {
    this.reset(now);
  }

  set(now: number, requests: number): void {
    this.month = monthOf(now);
    this.requests = requests;
  }

  async reconcile(): Promise<void> {}
  reconcileSoon(): void {}
  async flush(): Promise<void> {}
  async close(): Promise<void> {}

  /** A new month starts at 0. */
  private roll(now: number): void {
    const month = monthOf(now);
    if (month !== this.month) {
      this.month = month;
      this.requests = 0;
    }
  }
}
