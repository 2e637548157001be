/** A min-heap of items by due time: the next due in O(1), push and pop in O(log n). */
export class DueQueue<T extends { dueAt: number }> {
  private heap: T[] = [];

  get size(): number {
    return this.heap.length;
  }

  /** The earliest item, left in place. */
  peek(): T | undefined {
    return this.heap[0];
  }

  push(item: T): void {
    const heap = this.heap;
    heap.push(item);
    let i = heap.length - 1;
    while (i > 0) {
      const parent = (i - 1) >> 1;
      if ((heap[parent] as T).dueAt <= item.dueAt) break;
      heap[i] = heap[parent] as T;
      i = parent;
    }
    heap[i] = item;
  }

  pop(): T | undefined {
    const heap = this.heap;
    const top = heap[0];
    const last = heap.pop();
    if (heap.length === 0 || last === undefined) return top;
    let i = 0;
    for (;;) {
      const left = 2 * i + 1;
      if (left >= heap.length) break;
      const right = left + 1;
      const child = right < heap.length && (heap[right] as T).dueAt < (heap[left] as T).dueAt ? right : left;
      if ((heap[child] as T).dueAt >= last.dueAt) break;
      heap[i] = heap[child] as T;
      i = child;
    }
    heap[i] = last;
    return top;
  }

  clear(): void {
    this.heap = [];
  }
}
