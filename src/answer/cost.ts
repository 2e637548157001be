import type { IncomingHttpHeaders } from 'node:http';
import { METER_SCALE, type CostConfig, type EndpointConfig, type MeterConfig } from '../config/types.js';
import type { Reserves } from '../pipeline/meters.js';
import type { ExpressionOptions } from '../expression/compile.js';
import { compileString, type CompiledString } from '../expression/string-template.js';
import { numberOf } from '../expression/values.js';
import type { RequestContext } from '../expression/context.js';
import { compileParamReader, LazyRequestContext, type ParamReader } from './request-context.js';

/*
 * An endpoint's `cost:` compiled once per load: what a request reserves on each meter at admission
 * (the limits step asks it before the request is counted) and what it settles at after the answer.
 * Amounts are integers in millionths (METER_SCALE). Nothing here throws for a request: a value that
 * is not a number of 0 or more is a note, and the request goes on.
 */

/** One amount: a fixed number of millionths, or an expression read per request. */
type Amount =
  | { readonly units: number; readonly text?: undefined }
  | {
      readonly units?: undefined;
      readonly text: string;
      readonly value: CompiledString;
      readonly responseOnly: boolean;
    };

interface MeterCost {
  readonly reserve?: Amount;
  readonly settle?: Amount;
}

/** An endpoint's cost, ready for requests. */
export interface CompiledCost {
  /** Whether a reserve or settle reads the request body (the body step then reads it as a value). */
  readonly readsBody: boolean;
  /** Whether any meter settles after the answer (else the reserve stands and nothing runs then). */
  readonly settles: boolean;
  /**
   * What a request reserves on each of `meters` (NOT_METERED, -1, where this endpoint names no
   * cost on a meter; 0 for a cost without `reserve`), with a note for each value that could not be read.
   */
  reserves(meters: readonly MeterConfig[], request: CostRequest): { reserves: number[]; notes: string[] | undefined };
  /**
   * The reserves on each of `meters` when none of them is read from the request (every `reserve`
   * a number, or none): the same list for every request, made once per list of meters; else undefined.
   */
  fixedReserves(meters: readonly MeterConfig[]): Reserves | undefined;
  /**
   * settle − reserve on each of `meters` after the answer `response`; 0 where nothing settles or
   * the settle could not be read (then the reserve stands, with a note). Settles that read nothing
   * but the answer and call no function give the same figures for the same answer: the last answer's
   * result is given again (the same lists, which no caller changes).
   */
  deltas(
    meters: readonly MeterConfig[],
    reserves: readonly number[],
    request: () => CostRequest,
    response: { status: number; body: unknown },
  ): { deltas: number[]; notes: string[] | undefined };
  /**
   * Whether every settle reads the answer alone (a number, or `response` without a call): then
   * `deltas` never asks for the request, and the same answer settles the same.
   */
  readonly answerOnly: boolean;
  /**
   * What {@link deltas} gave last, when it was asked of the same meters, reserves and answer (the
   * same status and body value) and every settle reads the answer alone; else undefined. Asks nothing
   * of the request and makes nothing: the usual settle of a fixed answer.
   */
  lastDeltas(
    meters: readonly MeterConfig[],
    reserves: readonly number[],
    status: number,
    body: unknown,
  ): { deltas: number[]; notes: string[] | undefined } | undefined;
}

/** What a cost reads of a request. */
export interface CostRequest {
  readonly url: string;
  readonly mockPath: string;
  readonly headers: IncomingHttpHeaders;
  readonly body: unknown;
  readonly state: Readonly<Record<string, string>>;
  readonly now: number;
}

/** The expression options of a cost: the request (never its number), and `response` in a settle. */
export function costExpressionOptions(base: ExpressionOptions, settle: boolean): ExpressionOptions {
  return { ...base, requestNumber: false, allowResponse: settle };
}

const READS_BODY = /\bbody\b/;

function compileAmount(value: number | string | undefined, options: ExpressionOptions): Amount | undefined {
  if (value === undefined) return undefined;
  if (typeof value === 'number') return { units: Math.round(value * METER_SCALE) };
  const compiled = compileString(value, options);
  // The cost rules compiled every expression already: a failure here is a bug, not a config problem.
  if (!compiled.ok) throw new Error(`unvalidated cost expression ${JSON.stringify(value)}: ${compiled.issue.message}`);
  if (compiled.value.kind === 'constant') return { units: Math.round(Number(compiled.value.text) * METER_SCALE) };
  return { text: value, value: compiled.value, responseOnly: readsResponseOnly(value) };
}

/** A value read as an amount in millionths, or why it cannot be one. */
function unitsOf(value: unknown): number | string {
  const n = numberOf(value);
  if (n === undefined)
    return value === undefined || value === null
      ? 'gave nothing'
      : `gave ${JSON.stringify(value)?.slice(0, 40) ?? 'a value'}, not a number`;
  if (n < 0) return `gave ${n}, below 0`;
  const units = Math.round(n * METER_SCALE);
  return Number.isSafeInteger(units) ? units : `gave ${n}, too large`;
}

class SettleContext extends LazyRequestContext {
  constructor(
    request: CostRequest,
    readParams: ParamReader,
    readonly response: { status: number; body: unknown },
  ) {
    super({ ...request, request: 0, readParams, seed: 0, endpointKey: '', seedBy: undefined });
  }
}

/** A function call in an expression (`fake.name()`, `random(…)`): what it gives may change from one answer to the next. */
const CALLS = /[\w$]\s*\(/;

/** Whether an expression reads nothing but `response` (the usual settle): it then needs no request context. */
function readsResponseOnly(text: string): boolean {
  return !/\b(params|query|headers|cookies|body|state|now|env)\b/.test(
    text.replace(/\bresponse(\s*(\.\s*[\w$-]+|\[[^\]]*\]))*/g, ''),
  );
}

/** Compiles an endpoint's validated `cost:`; undefined when it has none. */
export function compileCost(endpoint: EndpointConfig, options: ExpressionOptions): CompiledCost | undefined {
  const cost: CostConfig[] | undefined = endpoint.cost;
  if (cost === undefined) return undefined;
  const reserveOptions = costExpressionOptions(options, false);
  const settleOptions = costExpressionOptions(options, true);
  const byMeter = new Map<string, MeterCost>();
  let readsBody = false;
  for (const one of cost) {
    const reserve = compileAmount(one.reserve, reserveOptions);
    const settle = compileAmount(one.settle, settleOptions);
    readsBody ||= [one.reserve, one.settle].some((v) => typeof v === 'string' && READS_BODY.test(v));
    byMeter.set(one.meter, {
      ...(reserve === undefined ? {} : { reserve }),
      ...(settle === undefined ? {} : { settle }),
    });
  }
  const readParams = compileParamReader(endpoint.path);
  // The costs in the order of a plan's meters, worked out once per list of meters (a plan's, made per load).
  const aligned = new WeakMap<readonly MeterConfig[], Array<MeterCost | undefined>>();
  const align = (meters: readonly MeterConfig[]): Array<MeterCost | undefined> => {
    let list = aligned.get(meters);
    if (list === undefined) aligned.set(meters, (list = meters.map((m) => byMeter.get(m.name))));
    return list;
  };
  // Every reserve a number (or none): one list per list of meters, for every request.
  const fixed = [...byMeter.values()].every((m) => m.reserve === undefined || m.reserve.text === undefined);
  const fixedLists = new WeakMap<readonly MeterConfig[], Reserves>();
  // Every settle a number, or read from the answer alone without a call: the same answer settles the same.
  const pure = [...byMeter.values()].every(
    (m) =>
      m.settle === undefined || m.settle.text === undefined || (m.settle.responseOnly && !CALLS.test(m.settle.text)),
  );
  let last:
    | {
        meters: readonly MeterConfig[];
        reserves: readonly number[];
        status: number;
        body: unknown;
        result: { deltas: number[]; notes: string[] | undefined };
      }
    | undefined;
  const context = (request: CostRequest): LazyRequestContext =>
    new LazyRequestContext({ ...request, request: 0, readParams, seed: 0, endpointKey: '', seedBy: undefined });
  return {
    readsBody,
    settles: [...byMeter.values()].some((m) => m.settle !== undefined),
    answerOnly: pure,
    lastDeltas(meters, reserves, status, body) {
      return last !== undefined &&
        last.body === body &&
        last.status === status &&
        last.reserves === reserves &&
        last.meters === meters
        ? last.result
        : undefined;
    },
    fixedReserves(meters) {
      if (!fixed) return undefined;
      let list = fixedLists.get(meters);
      if (list === undefined)
        fixedLists.set(
          meters,
          (list = align(meters).map((cost) => (cost === undefined ? -1 : (cost.reserve?.units ?? 0)))),
        );
      return list;
    },
    reserves(meters, request) {
      const costs = align(meters);
      const reserves: number[] = [];
      let notes: string[] | undefined;
      let ctx: LazyRequestContext | undefined;
      for (let i = 0; i < costs.length; i++) {
        const reserve = costs[i]?.reserve;
        if (costs[i] === undefined) reserves.push(-1);
        else if (reserve === undefined) reserves.push(0);
        else if (reserve.text === undefined) reserves.push(reserve.units);
        else {
          const units = unitsOf(reserve.value.evaluate((ctx ??= context(request))));
          if (typeof units === 'number') reserves.push(units);
          else {
            reserves.push(0);
            (notes ??= []).push(`reserve of ${meters[i]!.name} ${units}: nothing reserved`);
          }
        }
      }
      return { reserves, notes };
    },
    deltas(meters, reserves, request, response) {
      if (
        last !== undefined &&
        last.body === response.body &&
        last.status === response.status &&
        last.reserves === reserves &&
        last.meters === meters
      )
        return last.result;
      const costs = align(meters);
      const deltas: number[] = [];
      let notes: string[] | undefined;
      let ctx: SettleContext | undefined;
      // A settle of the answer alone (no call) reads it from a bare context: no request is parsed for it.
      let bare: RequestContext | undefined;
      for (let i = 0; i < costs.length; i++) {
        const settle = costs[i]?.settle;
        if (settle === undefined || reserves[i] === -1) deltas.push(0);
        else if (settle.text === undefined) deltas.push(settle.units - reserves[i]!);
        else {
          // A call (`randomInt(…)`, `fake.…`) needs the whole context (its seed and draws), whatever it reads.
          const context =
            settle.responseOnly && !CALLS.test(settle.text)
              ? (bare ??= { response } as unknown as RequestContext)
              : (ctx ??= new SettleContext(request(), readParams, response));
          const units = unitsOf(settle.value.evaluate(context));
          if (typeof units === 'number') deltas.push(units - reserves[i]!);
          else {
            deltas.push(0);
            (notes ??= []).push(
              `settle of ${meters[i]!.name} ${units}: the reserve of ${reserves[i]! / METER_SCALE} stands`,
            );
          }
        }
      }
      const result = { deltas, notes };
      if (pure) last = { meters, reserves, status: response.status, body: response.body, result };
      return result;
    },
  };
}
