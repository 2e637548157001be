// Lenient readers of the admin answers whose exact shape the page does not rely on: the
// endpoints (each with its answers and how many requests each got) and the run-time stubs.
import type { AnswerInfo, EndpointInfo, StubView } from './api-types.js';

/** Reads the `stubs` of `GET /__mockapi/stubs`; `endpoint` is the endpoint as sent (or `"GET /path"`). */
export function readStubs(data: unknown): StubView[] {
  if (!Array.isArray(data)) return [];
  return data.map((item): StubView => {
    const s = (item ?? {}) as Record<string, unknown>;
    const e = s.endpoint;
    let method = '';
    let path = '';
    if (typeof e === 'string') [method = '', path = ''] = e.split(' ');
    else if (e !== null && typeof e === 'object') {
      const ep = e as Record<string, unknown>;
      method = typeof ep.method === 'string' ? ep.method.toUpperCase() : '';
      path = typeof ep.path === 'string' ? ep.path : '';
    }
    const num = (v: unknown): number | null => (typeof v === 'number' ? v : null);
    return {
      id: String(s.id ?? ''),
      name: typeof s.name === 'string' ? s.name : null,
      method,
      path,
      times: num(s.times),
      remaining: num(s.remaining),
      hits: num(s.hits) ?? 0,
    };
  });
}

/**
 * Reads `GET /__mockapi/endpoints` leniently: the contract names what it holds (each endpoint, each
 * answer's name, how many requests each got), not its exact field names.
 */
export function readEndpoints(data: unknown): EndpointInfo[] {
  const list = Array.isArray(data)
    ? data
    : Array.isArray((data as { endpoints?: unknown })?.endpoints)
      ? (data as { endpoints: unknown[] }).endpoints
      : [];
  return list.map((item): EndpointInfo => {
    const e = (item ?? {}) as Record<string, unknown>;
    let method = typeof e.method === 'string' ? e.method : '';
    let path = typeof e.path === 'string' ? e.path : '';
    if ((method === '' || path === '') && typeof e.endpoint === 'string')
      [method = '', path = ''] = e.endpoint.split(' ');
    // `answerDetails` (status, when, weight, hits of each answer) where the server gives them.
    const answers = Array.isArray(e.answerDetails) ? e.answerDetails : Array.isArray(e.answers) ? e.answers : [];
    return {
      method,
      path,
      requests: countOf(e),
      ...(typeof e.failRate === 'number' && e.failRate > 0 ? { failRate: e.failRate } : {}),
      answers: answers.map((a): AnswerInfo =>
        typeof a === 'string' ? { name: a, requests: undefined } : answerOf(a as Record<string, unknown>),
      ),
    };
  });
}

function answerOf(a: Record<string, unknown>): AnswerInfo {
  const info: AnswerInfo = { name: String(a.name ?? a.answer ?? ''), requests: countOf(a) };
  if (typeof a.status === 'number' || typeof a.status === 'string') info.status = a.status;
  if (Array.isArray(a.when)) info.when = a.when.map(String);
  if (typeof a.weight === 'number') info.weight = a.weight;
  if (typeof a.times === 'number') info.times = a.times;
  return info;
}

function countOf(x: Record<string, unknown>): number | undefined {
  const n = x.requests ?? x.count;
  return typeof n === 'number' ? n : undefined;
}
