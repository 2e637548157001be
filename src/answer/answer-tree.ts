import type { AnswerItem, AnswerKind, AnswerList, EndpointConfig } from '../config/types.js';
import { drawFromLanes, streamLanes } from '../seeded.js';
import type { AnswerState } from './answer-state.js';
import type { RequestContext } from '../expression/context.js';
import type { ExpressionOptions } from '../expression/compile.js';
import { compileString, type CompiledString } from '../expression/string-template.js';
import { compileLeaf, type CompiledLeaf } from './leaf.js';
import type { AnswerParts } from './parts.js';
import { compileWhen, type CompiledWhen } from '../expression/matchers.js';
import { compileParamReader, type ParamReader } from './request-context.js';

/** A node of an endpoint's answer tree: a leaf, or a list that chooses among its items. */
type AnswerNode = { readonly kind: 'leaf'; readonly leaf: CompiledLeaf } | ListNode;

interface ListItem {
  readonly node: AnswerNode;
  readonly label: string;
  readonly when: CompiledWhen | undefined;
}

interface ListNode {
  readonly kind: AnswerKind;
  /** Position of the list in its endpoint (`responses[1].sequence`): its key in the runtime state. */
  readonly id: string;
  /** Key of the list's own pick stream (seeded like the fail rate, independent of it). */
  readonly drawKey: string;
  /** drawKey's lanes under the last seed a pick used (the server's, fixed for its life): hashed once, not per pick. */
  drawLanes?: { readonly seed: number; readonly lanes: readonly [number, number] };
  readonly loop: boolean;
  readonly items: readonly ListItem[];
  /** `sequence`: the step answering position p (before wrapping), one entry per request a round answers. */
  readonly steps: readonly number[];
  /** `pick`: running sums of the weights. */
  readonly cumulative: readonly number[];
}

/** The answer chosen for a request, and what answering with it moves. */
export interface AnswerChoice {
  readonly leaf: CompiledLeaf;
  /** Ids of the sequences to advance once the request is answered (not on a simulated failure). */
  readonly advances: readonly string[];
}

/** An endpoint's dynamic answers, compiled once per load. */
export interface DynamicAnswers {
  /** The body is read and parsed for this endpoint only when some answer reads `body`. */
  readonly readsBody: boolean;
  /** Every answer's name or position, in config order (`GET /__mockapi/endpoints`). */
  readonly labels: readonly string[];
  readonly usesFaker: boolean;
  readonly seedBy: CompiledString | undefined;
  readonly readParams: ParamReader;
  /** The answer for the request, or undefined when no `when` holds (the 404 of an unknown endpoint). */
  select(ctx: RequestContext, state: AnswerState, seed: number): AnswerChoice | undefined;
  /** For a request no answer matched: the closest item and what differs, for the log line. */
  closest(ctx: RequestContext): string | undefined;
}

const MAX_STEPS = 100_000;

/** Whether a string or `when` reads `body`: cheap and on the safe side (a false yes only costs the read). */
const READS_BODY = /\bbody\b/;

interface Build {
  readonly options: ExpressionOptions;
  readonly parts: AnswerParts;
  readonly endpointKey: string;
  readsBody: boolean;
  usesFaker: boolean;
}

async function compileNode(
  item: AnswerItem | { leaf: EndpointConfig['response']; list?: undefined },
  label: string,
  build: Build,
): Promise<AnswerNode> {
  if (item.list !== undefined) return compileList(item.list, label, build);
  const leaf = await compileLeaf(item.leaf, label, build.options, build.parts);
  build.usesFaker ||= leaf.usesFaker;
  build.readsBody ||= leaf.stream?.readsBody === true;
  return {
    kind: 'leaf',
    leaf:
      'name' in item && item.name !== undefined && item.leaf.name === undefined ? { ...leaf, label: item.name } : leaf,
  };
}

async function compileList(list: AnswerList, path: string, build: Build): Promise<ListNode> {
  const id = path === '' ? list.kind : `${path}.${list.kind}`;
  const items: ListItem[] = [];
  for (const [i, item] of list.items.entries()) {
    const label = item.name ?? `${id}[${i}]`;
    let when: CompiledWhen | undefined;
    if (list.kind === 'responses' && item.when !== undefined) {
      const compiled = compileWhen(item.when, { ...build.options, path: [] });
      if (!compiled.ok) throw new Error(`unvalidated when at ${label}`);
      when = compiled.value;
      build.readsBody ||= Object.keys(item.when).some((key) => key === 'body' || key.startsWith('body.'));
    }
    items.push({ node: await compileNode(item, `${id}[${i}]`, build), label, when });
  }
  const steps: number[] = [];
  if (list.kind === 'sequence') {
    list.items.forEach((item, i) => {
      for (let t = 0; t < item.times && steps.length < MAX_STEPS; t++) steps.push(i);
    });
  }
  const cumulative: number[] = [];
  let total = 0;
  for (const item of list.items) cumulative.push((total += list.kind === 'pick' ? item.weight : 0));
  return {
    kind: list.kind,
    id,
    drawKey: `pick\u0000${id}\u0000${build.endpointKey}`,
    loop: list.loop,
    items,
    steps,
    cumulative,
  };
}

/** Which step of a sequence answers its p-th request (from 0); with `times` summed past MAX_STEPS, the last step counted goes on. */
function stepAt(list: ListNode, position: number): number {
  const { steps } = list;
  const p = list.loop ? position % steps.length : Math.min(position, steps.length - 1);
  return steps[p] as number;
}

function pickAt(list: ListNode, draw: number): number {
  const { cumulative } = list;
  const target = draw * (cumulative[cumulative.length - 1] as number);
  for (let i = 0; i < cumulative.length; i++) if (target < (cumulative[i] as number)) return i;
  return cumulative.findLastIndex((sum, i) => sum > (i === 0 ? 0 : (cumulative[i - 1] as number)));
}

function select(
  node: AnswerNode,
  ctx: RequestContext,
  key: string,
  state: AnswerState,
  seed: number,
  advances: string[],
): CompiledLeaf | undefined {
  if (node.kind === 'leaf') return node.leaf;
  if (node.kind === 'responses') {
    for (const item of node.items) {
      if (item.when !== undefined && !item.when.test(ctx)) continue;
      const mark = advances.length;
      const found = select(item.node, ctx, key, state, seed, advances);
      if (found !== undefined) return found;
      advances.length = mark; // a nested list that matched nothing: try the next item
    }
    return undefined;
  }
  if (node.kind === 'sequence') {
    advances.push(node.id);
    return select(
      (node.items[stepAt(node, state.position(key, node.id))] as ListItem).node,
      ctx,
      key,
      state,
      seed,
      advances,
    );
  }
  const n = state.nextPick(key, node.id);
  if (node.drawLanes?.seed !== seed) node.drawLanes = { seed, lanes: streamLanes(seed, node.drawKey) };
  return select(
    (node.items[pickAt(node, drawFromLanes(node.drawLanes.lanes, n))] as ListItem).node,
    ctx,
    key,
    state,
    seed,
    advances,
  );
}

function leafLabels(node: AnswerNode, out: string[]): string[] {
  if (node.kind === 'leaf') out.push(node.leaf.label);
  else for (const item of node.items) leafLabels(item.node, out);
  return out;
}

function strings(value: unknown, out: string[]): string[] {
  if (typeof value === 'string') out.push(value);
  else if (value !== null && typeof value === 'object') for (const item of Object.values(value)) strings(item, out);
  return out;
}

/**
 * Compiles the answers of an endpoint that varies per request — a `responses`/`sequence`/`pick`
 * list, a `response` with expressions or `setState`, or a `seedBy` — or returns undefined for a
 * static endpoint, which keeps the precomputed path.
 */
export async function compileDynamicAnswers(
  endpoint: EndpointConfig,
  options: ExpressionOptions,
  parts: AnswerParts,
  isDynamicResponse: boolean,
  endpointKey = `${endpoint.method} ${endpoint.path}`,
): Promise<DynamicAnswers | undefined> {
  if (endpoint.answers === undefined && !isDynamicResponse) return undefined;
  const build: Build = { options, parts, endpointKey, readsBody: false, usesFaker: false };
  const root =
    endpoint.answers === undefined
      ? await compileNode({ leaf: endpoint.response }, 'response', build)
      : await compileList(endpoint.answers, '', build);
  let seedBy: CompiledString | undefined;
  if (endpoint.seedBy !== undefined) {
    const compiled = compileString(endpoint.seedBy, options);
    if (!compiled.ok) throw new Error(`unvalidated seedBy: ${compiled.issue.message}`);
    seedBy = compiled.value;
  }
  const texts = strings([endpoint.answers ?? endpoint.response, endpoint.seedBy], []);
  build.readsBody ||= texts.some((text) => text.includes('${') && READS_BODY.test(text));
  return {
    readsBody: build.readsBody,
    labels: leafLabels(root, []),
    usesFaker: build.usesFaker,
    seedBy,
    readParams: compileParamReader(endpoint.path),
    select(ctx, state, seed) {
      const advances: string[] = [];
      const leaf = select(root, ctx, endpointKey, state, seed, advances);
      return leaf === undefined ? undefined : { leaf, advances };
    },
    closest(ctx) {
      if (root.kind !== 'responses') return undefined;
      let best: { label: string; failing: string[] } | undefined;
      for (const item of root.items) {
        const failing = item.when?.failing(ctx) ?? [];
        if (best === undefined || failing.length < best.failing.length) best = { label: item.label, failing };
      }
      return best === undefined
        ? undefined
        : `no answer matched; closest: ${best.label} (${best.failing.join(', ')} did not match)`;
    },
  };
}
