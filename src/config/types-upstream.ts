/**
 * The loaded config's `upstream:` (the real API that fall-through, recording and verify send
 * requests to) and `recording:` (what `mockapi record` keeps of that traffic). Part of the
 * config's types; types.ts re-exports them.
 */

/** `upstream:`: the real API that fall-through and recording send requests to. */
export interface UpstreamConfig {
  /** Base URL without a trailing slash. */
  url: string;
  /** The credential sent upstream: its value is a template of `${env.MOCKAPI_*}` references. */
  auth?: { header: string; value: string };
  headers: Record<string, string>;
  /** Absolute path of a PEM file of extra certificate authorities. */
  ca?: string;
  timeoutMs: number;
  fallthrough: boolean;
}

/** `recording:`: what `mockapi record` keeps of the traffic it sends upstream. */
export interface RecordingConfig {
  captureRequestHeaders: string[];
  keepResponseHeaders: string[];
  redactFields: string[];
  redactPatterns: string[];
  recordRefusals: boolean;
  /** Whether a route the upstream answered only with 404 becomes an endpoint (`recording.recordNotFound`). */
  recordNotFound: boolean;
}
