/** Requests that broke the OpenAPI description, counted for the summary `serve` prints at stop. */
export interface ViolationTally {
  /** Counts one validated request of `endpoint` with `count` violations (0 counts it as validated). */
  add(endpoint: string, count: number): void;
  /** How many validated requests broke the description. */
  readonly violated: number;
  /** One line for the log at stop; undefined when no request was validated. */
  summary(): string | undefined;
}

/** A tally of validated requests, kept for the server's life (a reload keeps it). */
export function createViolationTally(): ViolationTally {
  let validated = 0;
  let violated = 0;
  let violations = 0;
  const byEndpoint = new Map<string, number>();
  return {
    add(endpoint, count) {
      validated++;
      if (count === 0) return;
      violated++;
      violations += count;
      byEndpoint.set(endpoint, (byEndpoint.get(endpoint) ?? 0) + 1);
    },
    get violated() {
      return violated;
    },
    summary() {
      if (validated === 0) return undefined;
      if (violated === 0)
        return `OpenAPI validation: all ${validated} validated request${validated === 1 ? '' : 's'} followed the description`;
      const worst = [...byEndpoint]
        .sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : 1))
        .slice(0, 5)
        .map(([key, n]) => `${key} (${n})`)
        .join(', ');
      return `OpenAPI validation: ${violated} of ${validated} validated request${validated === 1 ? '' : 's'} broke the description (${violations} violation${violations === 1 ? '' : 's'}): ${worst}; see GET /__mockapi/requests?violations=true`;
    },
  };
}
