import type { DelayShape, FaultConfig } from '../config/types.js';
import { MAX_DURATION_MS } from '../config/units.js';
import { createDrawStreams, type DrawStreams } from '../seeded.js';

/**
 * The resilience decisions per request: which fault (if any) and how long a latency shape waits. Each
 * comes from a seeded stream of its own (see {@link createDrawStreams}), keyed by the endpoint (and
 * the answer, for a leaf's faults), so with a seed the n-th request's fault and delay depend only
 * on the seed, the endpoint and n, and never move `failRate`'s draws. Kept across reloads; a new
 * seed starts the streams over, as it does for the fail rate.
 */
export interface ResilienceSource {
  /** The fault of the next request through `key`'s faults, or undefined for none. */
  fault(seed: number, key: string, faults: readonly FaultConfig[]): FaultConfig | undefined;
  /** The next delay of `key`'s latency shape, in whole milliseconds. */
  delay(seed: number, key: string, shape: DelayShape): number;
}

/** Creates the source; its streams are made for the first seed asked for, and again when it changes. */
export function createResilienceSource(): ResilienceSource {
  let seedInUse: number | undefined;
  let streams: DrawStreams | undefined;
  function streamsFor(seed: number): DrawStreams {
    if (streams === undefined || seed !== seedInUse) {
      streams = createDrawStreams(seed);
      seedInUse = seed;
    }
    return streams;
  }
  return {
    fault(seed, key, faults) {
      return pickFault(faults, streamsFor(seed).next(`fault ${key}`));
    },
    delay(seed, key, shape) {
      return shapeDelay(shape, streamsFor(seed).next(`delay ${key}`));
    },
  };
}

/** One draw `u` in [0, 1) decides among the faults: the first whose running total of rates exceeds `u`. */
export function pickFault(faults: readonly FaultConfig[], u: number): FaultConfig | undefined {
  let total = 0;
  for (const fault of faults) {
    total += fault.rate;
    if (u < total) return fault;
  }
  return undefined;
}

/** The standard normal's 99th percentile: log-normal `sigma` is ln(p99 / median) / Z_99. */
const Z_99 = 2.326347874040841;

/** The delay of draw `u` (in [0, 1)) under `shape`, whole milliseconds, at most a timer's longest wait. */
export function shapeDelay(shape: DelayShape, u: number): number {
  if (shape.kind === 'uniform') return Math.round(shape.minMs + u * (shape.maxMs - shape.minMs));
  if (shape.medianMs <= 0) return 0;
  const sigma = Math.log(Math.max(shape.p99Ms, shape.medianMs) / shape.medianMs) / Z_99;
  const ms = shape.medianMs * Math.exp(sigma * inverseNormal(Math.min(Math.max(u, 1e-12), 1 - 1e-12)));
  return Math.min(MAX_DURATION_MS, Math.round(ms));
}

/**
 * The standard normal quantile function (Acklam's rational approximation, relative error below
 * 1.2e-9): one uniform draw gives one normal value, so the n-th request's delay needs only draw n.
 */
export function inverseNormal(p: number): number {
  const a = [
    -3.969683028665376e1, 2.209460984245205e2, -2.759285104469687e2, 1.38357751867269e2, -3.066479806614716e1,
    2.506628277459239,
  ];
  const b = [
    -5.447609879822406e1, 1.615858368580409e2, -1.556989798598866e2, 6.680131188771972e1, -1.328068155288572e1,
  ];
  const c = [
    -7.784894002430293e-3, -3.223964580411365e-1, -2.400758277161838, -2.549732539343734, 4.374664141464968,
    2.938163982698783,
  ];
  const d = [7.784695709041462e-3, 3.224671290700398e-1, 2.445134137142996, 3.754408661907416];
  const low = 0.02425;
  if (p < low) {
    const q = Math.sqrt(-2 * Math.log(p));
    return (
      (((((c[0]! * q + c[1]!) * q + c[2]!) * q + c[3]!) * q + c[4]!) * q + c[5]!) /
      ((((d[0]! * q + d[1]!) * q + d[2]!) * q + d[3]!) * q + 1)
    );
  }
  if (p > 1 - low) return -inverseNormal(1 - p);
  const q = p - 0.5;
  const r = q * q;
  return (
    ((((((a[0]! * r + a[1]!) * r + a[2]!) * r + a[3]!) * r + a[4]!) * r + a[5]!) * q) /
    (((((b[0]! * r + b[1]!) * r + b[2]!) * r + b[3]!) * r + b[4]!) * r + 1)
  );
}

/** What an endpoint configures of network faults and latency shapes; absent from endpoints without any. */
export interface EndpointResilience {
  /** The endpoint's own `faults`. */
  readonly faults?: readonly FaultConfig[];
  /** A static endpoint's `response.faults` (a dynamic endpoint's leaves carry theirs). */
  readonly responseFaults?: readonly FaultConfig[];
  readonly delayShape?: DelayShape;
  /** Whether some leaf of a dynamic endpoint has faults. */
  readonly leafFaults: boolean;
}

/** What one request gets: its fault (or none) and the delay its latency shape drew (0 without one). */
export interface ResilienceDecision {
  fault: FaultConfig | undefined;
  shapedDelayMs: number;
}

/**
 * Decides the fault and the shaped delay of one request to the endpoint `key`, answered by the
 * leaf `leaf` (label and faults) when the endpoint is dynamic: the endpoint's faults first, then
 * the answer's, each from its own stream, so a leaf's stream counts only the requests it answers.
 */
export function decideResilience(
  source: ResilienceSource,
  seed: number,
  key: string,
  r: EndpointResilience,
  leaf?: { readonly label: string; readonly faults?: readonly FaultConfig[] },
): ResilienceDecision {
  let fault = r.faults === undefined ? undefined : source.fault(seed, key, r.faults);
  const answerFaults = leaf === undefined ? r.responseFaults : leaf.faults;
  if (answerFaults !== undefined) {
    const answerFault = source.fault(seed, `${key} ${leaf?.label ?? 'response'}`, answerFaults);
    fault ??= answerFault;
  }
  return { fault, shapedDelayMs: r.delayShape === undefined ? 0 : source.delay(seed, key, r.delayShape) };
}

/** The endpoint's resilience settings, or undefined when it has none (the usual endpoint pays nothing). */
export function endpointResilience(
  endpoint: { faults?: FaultConfig[]; delayShape?: DelayShape; response: { faults?: FaultConfig[] } },
  dynamic: boolean,
  leafFaults: boolean,
): EndpointResilience | undefined {
  const responseFaults = dynamic ? undefined : endpoint.response.faults;
  if (endpoint.faults === undefined && endpoint.delayShape === undefined && responseFaults === undefined && !leafFaults)
    return undefined;
  return {
    ...(endpoint.faults === undefined ? {} : { faults: endpoint.faults }),
    ...(responseFaults === undefined ? {} : { responseFaults }),
    ...(endpoint.delayShape === undefined ? {} : { delayShape: endpoint.delayShape }),
    leafFaults,
  };
}
