/**
 * Size of `data` written out as JSON with every shared value copied, roughly (escapes aside).
 * Stops counting once past `limit`. A shared value is measured once and then added for each
 * reuse, so this is quick however much the aliases expand. A value inside itself (a cycle,
 * reported later by the rules) is counted once.
 */
export function expandedSize(data: unknown, limit: number): number {
  const EXIT = Symbol('exit');
  const measured = new Map<object, number>();
  const onPath = new Set<object>();
  const starts: number[] = [];
  const stack: unknown[] = [data];
  let size = 0;
  while (stack.length > 0 && size <= limit) {
    const value = stack.pop();
    if (value === EXIT) {
      const done = stack.pop() as object;
      onPath.delete(done);
      measured.set(done, size - (starts.pop() as number));
    } else if (typeof value !== 'object' || value === null) {
      size += typeof value === 'string' ? value.length + 2 : String(value).length + 1;
    } else if (measured.has(value)) {
      size += measured.get(value) as number;
    } else if (onPath.has(value)) {
      size += 1;
    } else {
      starts.push(size);
      size += 1;
      onPath.add(value);
      stack.push(value, EXIT);
      if (Array.isArray(value)) {
        for (let i = value.length - 1; i >= 0; i--) stack.push(value[i]);
      } else {
        for (const key of Object.keys(value)) {
          size += key.length;
          stack.push((value as Record<string, unknown>)[key]);
        }
      }
    }
  }
  return size;
}
