/**
 * Compiling the names an expression reads: its sources (`params`, `query`, `headers`, `body`,
 * `state`, `now`, `env`, …) and their members (`params.id`, `now.unix`, `env.MOCKAPI_KEY`,
 * `resources.customers`), each refused with a plain reason (and a "did you mean") where this
 * place of the config cannot read it. Also the messages for an unknown path parameter or scenario,
 * which the config rules reuse for `when` keys.
 */
import { suggestField } from '../suggest-field.js';
import type { RequestContext } from './context.js';
import type { Node } from './ast.js';
import { BUILTINS, nowIso } from './functions.js';
import { FORBIDDEN_NAMES, internalize, readOwn } from './values.js';
import { ExpressionError, type Evaluate, type ExpressionOptions, type SubCompile } from './compile-types.js';

const ROOTS = [
  'params',
  'query',
  'headers',
  'cookies',
  'body',
  'request',
  'state',
  'now',
  'env',
  'index',
  'resources',
] as const;
const ENV_PREFIX = 'MOCKAPI_';

export function compileName(name: string, offset: number, options: ExpressionOptions): Evaluate {
  const why =
    options.unavailable !== undefined && Object.hasOwn(options.unavailable, name)
      ? options.unavailable[name]
      : undefined;
  if (why !== undefined) throw new ExpressionError(why, offset);
  switch (name) {
    case 'params':
      return (ctx) => ctx.params;
    case 'query':
      return (ctx) => ctx.query;
    case 'headers':
      return (ctx) => ctx.headers;
    case 'cookies':
      return (ctx) => ctx.cookies;
    case 'body':
      return (ctx) => ctx.body;
    case 'request':
      if (options.requestNumber === false)
        throw new ExpressionError(
          "`request` (the request's number) is counted once the request is admitted: a `cost` cannot read it",
          offset,
        );
      return (ctx) => ctx.request;
    case 'state':
      return (ctx) => ctx.state;
    case 'now':
      return nowIso;
    case 'violations':
      if (options.allowViolations === true) return (ctx) => ctx.violations;
      throw new ExpressionError('`violations` can only be read in `openapi.validate.answer`', offset);
    case 'error':
    case 'key':
      if (options.errorSources === true) return (ctx) => (ctx as unknown as Readonly<Record<string, unknown>>)[name];
      throw new ExpressionError(`\`${name}\` can only be read in an \`errors:\` answer`, offset);
    case 'index':
      if (options.allowIndex === true) return (_ctx, i) => i;
      throw new ExpressionError('`index` can only be read inside the `$item` of a `$repeat`', offset);
    case 'env':
      throw new ExpressionError('`env` takes a variable name: env.MOCKAPI_NAME', offset);
    case 'response':
      if (options.allowResponse === true) return (ctx) => (ctx as RequestContext & { response?: unknown }).response;
      throw new ExpressionError(
        '`response` can only be read in the `data` of a `send` and in the `settle` of a `cost`',
        offset,
      );
    case 'fake':
      throw new ExpressionError('`fake` needs a module and a method: fake.person.fullName()', offset);
    case 'resource':
      if (options.allowResource === true) return (ctx) => ctx.resource;
      throw new ExpressionError(
        "`resource` can only be read in a resource's `id`, `fields`, `actions`, `lifecycle` and `errors`",
        offset,
      );
    case 'resources':
      throw new ExpressionError('`resources` takes a collection name: resources.customers', offset);
  }
  if (Object.hasOwn(BUILTINS, name))
    throw new ExpressionError(`\`${name}\` is a function: call it, ${name}(…)`, offset);
  const roots: readonly string[] = options.errorSources === true ? [...ROOTS, 'error', 'key'] : ROOTS;
  const hint = suggestField(name, roots);
  const known = hint === undefined ? `; the sources are ${roots.join(', ')}` : `; did you mean \`${hint}\`?`;
  throw new ExpressionError(`unknown source \`${name}\`${known}`, offset);
}

/** `<object>.<key>`: `env.MOCKAPI_*` read at compile time, `now.*`, `resources.*`, else an own property. */
export function compileMember(
  node: Extract<Node, { type: 'member' }>,
  options: ExpressionOptions,
  sub: SubCompile,
): Evaluate {
  const { key, offset } = node;
  if (FORBIDDEN_NAMES.has(key)) throw new ExpressionError(`\`${key}\` cannot be read`, offset);
  const root = node.object.type === 'name' ? node.object.name : undefined;
  if (root !== undefined && options.unavailable !== undefined && Object.hasOwn(options.unavailable, root))
    throw new ExpressionError(options.unavailable[root] as string, node.object.offset);
  if (root === 'env') {
    if (!key.startsWith(ENV_PREFIX))
      throw new ExpressionError(
        `only environment variables starting with ${ENV_PREFIX} can be read, not \`${key}\``,
        offset,
      );
    const value = options.env !== undefined && Object.hasOwn(options.env, key) ? options.env[key] : undefined;
    return () => value;
  }
  if (
    root === 'fake' ||
    (node.object.type === 'member' && node.object.object.type === 'name' && node.object.object.name === 'fake')
  ) {
    throw new ExpressionError('a `fake.` function must be called: fake.person.fullName()', offset);
  }
  if (root === 'state' && options.scenarios !== undefined && !options.scenarios.includes(key)) {
    throw new ExpressionError(unknownScenario(key, options.scenarios), offset);
  }
  if (root === 'params' && options.params !== undefined && !options.params.includes(key)) {
    throw new ExpressionError(unknownParam(key, options.params), offset);
  }
  if (root === 'now') return nowMember(key, offset);
  if (root === 'resources') return resourcesMember(key, offset, options);
  const object = sub(node.object);
  const name = internalize(root === 'headers' ? key.toLowerCase() : key);
  return (ctx, i) => readOwn(object(ctx, i), name);
}

/** `now.unix` (whole seconds), `now.ms` (milliseconds) and `now.iso` of the server's clock. */
function nowMember(key: string, offset: number): Evaluate {
  if (key === 'unix') return (ctx) => Math.floor(ctx.now / 1000);
  if (key === 'ms') return (ctx) => ctx.now;
  if (key === 'iso') return nowIso;
  throw new ExpressionError(`\`now\` has unix, ms and iso, not \`${key}\``, offset);
}

/** `resources.<name>`: the objects of a configured collection, oldest first. */
function resourcesMember(name: string, offset: number, options: ExpressionOptions): Evaluate {
  if (options.resources !== undefined && !options.resources.includes(name)) {
    const hint = suggestField(name, options.resources);
    const known =
      hint !== undefined
        ? `did you mean \`resources.${hint}\`?`
        : options.resources.length === 0
          ? 'no resources are configured'
          : `the resources are ${options.resources.join(', ')}`;
    throw new ExpressionError(`unknown resource \`${name}\`; ${known}`, offset);
  }
  const internal = internalize(name);
  return (ctx) => ctx.resources?.collection(internal);
}

/**
 * The message for `params.<name>` (in an expression or a `when` key) naming no `:name` of the
 * endpoint's path: such a read would always give nothing, so it is a typo.
 */
export function unknownParam(name: string, params: readonly string[]): string {
  const names = params.filter((p) => p !== '*');
  const hint = suggestField(name, names);
  const known =
    names.length === 0
      ? 'the path has no parameters'
      : hint !== undefined
        ? `did you mean \`params.${hint}\`?`
        : `the path has ${names.map((p) => `:${p}`).join(', ')}`;
  return `reads \`params.${name}\`, a path parameter the path does not have; ${known}`;
}

/** The message for `state.<name>` naming no declared scenario. */
export function unknownScenario(name: string, scenarios: readonly string[]): string {
  const hint = suggestField(name, scenarios);
  if (hint !== undefined) return `unknown scenario \`${name}\`; did you mean \`${hint}\`?`;
  return scenarios.length === 0
    ? `unknown scenario \`${name}\`; no scenarios are declared`
    : `unknown scenario \`${name}\`; declared: ${scenarios.join(', ')}`;
}
