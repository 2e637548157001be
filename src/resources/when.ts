/** The fields a `when` looks at, with the values it accepts when it is `{ in: [...] }` or one value (for messages). */
export function acceptedValues(
  when: Record<string, unknown> | undefined,
  field: string,
): readonly unknown[] | undefined {
  const matcher = when?.[field];
  if (matcher === undefined) return undefined;
  if (matcher === null || typeof matcher !== 'object') return [matcher];
  const list = (matcher as { in?: unknown }).in;
  return Array.isArray(list) ? list : undefined;
}
