/**
 * The most bytes a recorded answer may hold once decoded: a larger one (a gzip or brotli bomb among
 * them: 1.6 KB of brotli can expand to gigabytes) is proxied as sent and not recorded.
 */
export const MAX_RECORDED_BODY = 256 * 1024 * 1024;

/** One exchange sent upstream and answered, as a recording keeps it (before any redaction). */
export interface RecordedExchange {
  /** Arrival order: the recording's own counter (never a clock reading, so output is reproducible). */
  seq: number;
  method: string;
  /** The path after `/mock`, without the query string, percent-decoded per segment as sent. */
  path: string;
  /** Query parameters (first value of each). */
  query: Record<string, string>;
  /** Request headers (lower-case names), all of them: capture decides later which are kept. */
  requestHeaders: Record<string, string>;
  requestBody?: Buffer;
  status: number;
  /** Response header pairs (lower-case names), as received. */
  responseHeaders: Array<[string, string]>;
  /** The response body, decoded (gzip, deflate, br). */
  responseBody: Buffer;
}

/** Where a recording's exchanges go: `capture` is told of every upstream answer. */
export interface RecordingSink {
  /** Whether an exchange of this method and path is to be kept at all (`--only`, refusals). */
  wants(method: string, path: string, status: number): boolean;
  capture(exchange: Omit<RecordedExchange, 'seq'>): void;
  /** An answer too large to keep once decoded, or one whose encoding does not decode: proxied, not recorded (told at the write). */
  notKept(): void;
  /** `--mode all`: matched requests go upstream too. */
  readonly all: boolean;
  /** Whether recording is on now. */
  readonly active: boolean;
}
