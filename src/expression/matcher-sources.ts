import { suggestField } from '../suggest-field.js';
import type { RequestContext } from './context.js';
import { unknownScenario } from './compile.js';
import { FORBIDDEN_NAMES, internalize, readOwn } from './values.js';

/**
 * Where a `when` entry reads: `text` sources (params, query, headers, cookies, request, state) hold
 * text — or a list of texts for a repeated query parameter — and compare as text; the `json` source
 * (body) holds JSON values and compares as such.
 */
export interface MatcherSource {
  readonly kind: 'text' | 'json';
  readonly read: (ctx: RequestContext) => unknown;
}

export type SourceResult =
  { readonly ok: true; readonly source: MatcherSource } | { readonly ok: false; readonly message: string };

const PREFIXES = ['params', 'query', 'headers', 'cookies', 'body', 'state'] as const;
const SOURCE_FORMS =
  'params.<name>, query.<name>, headers.<name>, cookies.<name>, body.<path>, request, state.<scenario>';

/** Parses a `when` key such as `params.id`, `headers.X-Tenant`, `body.items.0.sku` or `request`. */
export function parseSource(key: string, scenarios: readonly string[] | undefined): SourceResult {
  if (key === 'request') return { ok: true, source: { kind: 'text', read: (ctx) => ctx.request } };
  if (key === 'body') return { ok: true, source: { kind: 'json', read: (ctx) => ctx.body } };
  const dot = key.indexOf('.');
  const prefix = dot === -1 ? key : key.slice(0, dot);
  const name = dot === -1 ? '' : internalize(key.slice(dot + 1));
  if (!(PREFIXES as readonly string[]).includes(prefix)) {
    const hint = suggestField(prefix, [...PREFIXES, 'request']);
    return {
      ok: false,
      message: `is not a known source${hint === undefined ? '' : `; did you mean \`${hint}${hint === 'request' ? '' : `.${name || '<name>'}`}\`?`}; sources are ${SOURCE_FORMS}`,
    };
  }
  if (name === '') return { ok: false, message: `needs a name after \`${prefix}.\`, e.g. \`${prefix}.id\`` };
  switch (prefix) {
    case 'params':
      return text((ctx) => readOwn(ctx.params, name));
    case 'query':
      return text((ctx) => readOwn(ctx.query, name));
    case 'headers': {
      const lower = internalize(name.toLowerCase());
      return text((ctx) => readOwn(ctx.headers, lower));
    }
    case 'cookies':
      return text((ctx) => readOwn(ctx.cookies, name));
    case 'state':
      if (scenarios !== undefined && !scenarios.includes(name))
        return { ok: false, message: `reads an ${unknownScenario(name, scenarios)}` };
      return text((ctx) => readOwn(ctx.state, name));
    default:
      return bodyPath(name);
  }
}

function text(read: (ctx: RequestContext) => unknown): SourceResult {
  return { ok: true, source: { kind: 'text', read } };
}

/** `body.a.b.0.c`: object keys and list positions, own properties only. */
function bodyPath(path: string): SourceResult {
  const segments = path.split('.').map(internalize);
  if (segments.some((segment) => segment === ''))
    return { ok: false, message: 'has an empty step in its body path (`a..b`)' };
  const forbidden = segments.find((segment) => FORBIDDEN_NAMES.has(segment));
  if (forbidden !== undefined) return { ok: false, message: `cannot read \`${forbidden}\`` };
  return {
    ok: true,
    source: {
      kind: 'json',
      read: (ctx) => {
        let value: unknown = ctx.body;
        for (const segment of segments) value = readOwn(value, segment);
        return value;
      },
    },
  };
}
