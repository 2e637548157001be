import { streamOutline, type StreamOutline } from '../stream/outline.js';
import type { CompiledEndpoint } from '../answer/compile.js';
import type { AnswerItem, AnswerList, Config, EndpointConfig, ResponseConfig } from '../config/types.js';
import { answerNames } from './answer-state.js';
import type { EndpointCounts, EndpointInfo } from './control-plane.js';
import type { Journal } from './journal.js';

/** One answer of an endpoint as the inspector's Endpoints view shows it. */
export interface AnswerOutline {
  /** Its name, else its position (`responses[1].sequence[0]`), as the journal calls it. */
  name: string;
  /** The status it answers with; the `${…}` text when the status is computed per request. */
  status: number | string;
  /** The `when` conditions that must hold for it, outermost first ("params.id = 7"); none for a fallback. */
  when: string[];
  /** Its relative chance, when it is an item of a `pick`. */
  weight?: number;
  /** How many requests it answers in a row, when it is a step of a `sequence`. */
  times?: number;
  /** Requests it answered since the start or the last clear of the journal. */
  requests: number;
  /** A streamed answer: its format and events (a preset expanded), timing and faults. */
  stream?: StreamOutline;
}

/** `GET /__mockapi/endpoints`: each endpoint of the served config, its answers and their hits. */
export function endpointInfos(
  current: { readonly config: Config; readonly endpoints: readonly CompiledEndpoint[] },
  journal: Pick<Journal, 'endpointCounts' | 'answerCounts'>,
  given?: EndpointCounts,
): EndpointInfo[] {
  const counts = given?.endpoints ?? journal.endpointCounts();
  const byAnswer = given?.answers ?? journal.answerCounts();
  return current.endpoints.map((e, i) => {
    const answers = answerNames(e);
    const config = current.config.endpoints[i]; // compiled in config order
    const answerDetails = config === undefined ? [] : answerOutline(config, answers, byAnswer.get(e.key));
    return {
      endpoint: e.key,
      method: e.method,
      path: e.path,
      answers,
      requests: counts.get(e.key) ?? 0,
      failRate: config?.failRate ?? 0,
      answerDetails,
    };
  });
}

interface Along {
  when: string[];
  weight?: number;
  times?: number;
}

/**
 * The answers of an endpoint with their status, conditions, weight and hits, in config order —
 * the order of the journal's answer names (`names`), which give each one its name.
 */
export function answerOutline(
  endpoint: EndpointConfig,
  names: readonly string[],
  counts: ReadonlyMap<string, number> | undefined,
): AnswerOutline[] {
  const leaves: { leaf: ResponseConfig; along: Along }[] = [];
  if (endpoint.answers === undefined) leaves.push({ leaf: endpoint.response, along: { when: [] } });
  else walk(endpoint.answers, { when: [] }, leaves);
  return leaves.map(({ leaf, along }, i) => {
    const name = names[i] ?? leaf.name ?? `#${i}`;
    const outline: AnswerOutline = {
      name,
      status: leaf.statusExpression ?? leaf.status,
      when: along.when,
      requests: counts?.get(name) ?? 0,
    };
    if (along.weight !== undefined) outline.weight = along.weight;
    if (along.times !== undefined) outline.times = along.times;
    if (leaf.stream !== undefined) outline.stream = streamOutline(leaf.stream);
    return outline;
  });
}

function walk(list: AnswerList, along: Along, out: { leaf: ResponseConfig; along: Along }[]): void {
  for (const item of list.items) {
    const here: Along = { when: item.when === undefined ? along.when : [...along.when, ...describeWhen(item.when)] };
    const weight = list.kind === 'pick' ? item.weight : along.weight;
    const times = list.kind === 'sequence' ? item.times : along.times;
    if (weight !== undefined) here.weight = weight;
    if (times !== undefined) here.times = times;
    if (item.list !== undefined) walk(item.list, here, out);
    else out.push({ leaf: item.leaf, along: here });
  }
}

/** `{ params.id: "7", query.x: { in: [1, 2] } }` → `params.id = 7`, `query.x {"in":[1,2]}`. */
function describeWhen(when: Record<string, unknown>): string[] {
  return Object.entries(when).map(([source, matcher]) =>
    matcher !== null && typeof matcher === 'object'
      ? `${source} ${JSON.stringify(matcher)}`
      : `${source} = ${String(matcher)}`,
  );
}

/**
 * The states each declared scenario is known to take: its initial state, every state an answer's
 * `setState` moves it to, and every state a `when` compares it with (a plain value or `in`), plus
 * `current` (a state set through the admin API may be none of those). Sorted, initial first.
 */
export function scenarioStates(
  config: Pick<Config, 'scenarios' | 'endpoints'>,
  current: Readonly<Record<string, string>>,
): Record<string, string[]> {
  const known = new Map<string, Set<string>>(
    Object.entries(config.scenarios).map(([name, s]) => [name, new Set([s.initial])]),
  );
  const add = (name: string, state: unknown): void => {
    if (typeof state === 'string' && !state.includes('${')) known.get(name)?.add(state);
  };
  const visitLeaf = (leaf: ResponseConfig): void => {
    for (const [name, state] of Object.entries(leaf.setState ?? {})) add(name, state);
  };
  const visitItem = (item: AnswerItem): void => {
    for (const [source, matcher] of Object.entries(item.when ?? {})) {
      if (!source.startsWith('state.')) continue;
      const name = source.slice('state.'.length);
      if (typeof matcher === 'string') add(name, matcher);
      else if (matcher !== null && typeof matcher === 'object' && Array.isArray((matcher as { in?: unknown }).in))
        for (const s of (matcher as { in: unknown[] }).in) add(name, s);
    }
    if (item.list !== undefined) item.list.items.forEach(visitItem);
    else visitLeaf(item.leaf);
  };
  for (const endpoint of config.endpoints) {
    if (endpoint.answers === undefined) visitLeaf(endpoint.response);
    else endpoint.answers.items.forEach(visitItem);
  }
  for (const [name, state] of Object.entries(current)) add(name, state);
  return Object.fromEntries(
    [...known].map(([name, states]) => {
      const initial = config.scenarios[name]?.initial ?? '';
      return [name, [initial, ...[...states].filter((s) => s !== initial).sort()]];
    }),
  );
}
