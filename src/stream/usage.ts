/**
 * The `usage` a stream carries, as a cost's settle reads it (`response.body.usage`): whether an
 * openai-chat request asks for its usage chunk, the usage an explicit event's data holds, and the
 * usages of the events sent so far merged as a client reads them.
 */

/** Whether the request asks for openai-chat's usage chunk (`stream_options.include_usage`). */
export function wantsUsage(body: unknown): boolean {
  const options =
    body !== null && typeof body === 'object' ? (body as { stream_options?: unknown }).stream_options : undefined;
  return (
    options !== null && typeof options === 'object' && (options as { include_usage?: unknown }).include_usage === true
  );
}

/** The `usage` an event's data carries: its own, or its `message`'s or `response`'s (Anthropic's and the Responses API's events). */
export function usageIn(data: unknown): Record<string, unknown> | undefined {
  if (data === null || typeof data !== 'object') return undefined;
  const d = data as Record<string, unknown>;
  for (const holder of [d, d.message, d.response]) {
    const usage = holder !== null && typeof holder === 'object' ? (holder as Record<string, unknown>).usage : undefined;
    if (usage !== null && typeof usage === 'object' && !Array.isArray(usage)) return usage as Record<string, unknown>;
  }
  return undefined;
}

/** The usages of the first `sent` events merged, later fields over earlier ones; undefined when none carried one. */
export function mergeUsage(
  carried: ReadonlyArray<Record<string, unknown> | undefined>,
  sent: number,
): Record<string, unknown> | undefined {
  let merged: Record<string, unknown> | undefined;
  for (let i = 0; i < Math.min(sent, carried.length); i++)
    if (carried[i] !== undefined) merged = { ...merged, ...carried[i] };
  return merged;
}
