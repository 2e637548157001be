import { suggestField } from '../suggest-field.js';
import type { RequestContext } from './context.js';
import { startOf, type Node } from './ast.js';
import { FAKER_API, FAKER_REFUSED } from './faker-api.js';
import { fakerCall } from './faker.js';
import { BUILTINS, nowIso, parseOffset } from './functions.js';
import { FORBIDDEN_NAMES, internalize, isNothing, numberOf, readOwn, textOf } from './values.js';

/** A compiled expression: reads the request (and `index` inside a `$repeat` item), never throws. */
export type Evaluate = (ctx: RequestContext, index: number | undefined) => unknown;

/** What the compiler needs to know beyond the expression itself. */
export interface ExpressionOptions {
  /** Environment to read `env.MOCKAPI_*` from, once, at compile time (pass `process.env`). Default: none. */
  readonly env?: Readonly<Record<string, string | undefined>>;
  /** Declared scenarios; when given, `state.<name>` must name one of them. */
  readonly scenarios?: readonly string[];
  /** The `:name` parameters of the endpoint's path; when given, `params.<name>` must name one of them. */
  readonly params?: readonly string[];
  /** Whether `index` may be read (inside a `$repeat` item). */
  readonly allowIndex?: boolean;
  /** Whether `response` (the answer just sent: `{ status, body }`) may be read: in a webhook's `send`. */
  readonly allowResponse?: boolean;
  /** Whether `violations` may be read (the answer to a request that breaks the OpenAPI description). */
  readonly allowViolations?: boolean;
  /** Whether `error` and `key` may be read (in an `errors:` template; see src/http/error-answers.ts). */
  readonly errorSources?: boolean;
  /** False where the request's number is not known (a `cost`, asked at admission): `request` is refused. */
  readonly requestNumber?: boolean;
  /** Whether `resource` (the object a resource's operation acts on) may be read: in a resource's `fields`, `set`, `send`. */
  readonly allowResource?: boolean;
  /** The names of the configured resources; when given, `resources.<name>` must name one of them. */
  readonly resources?: readonly string[];
  /** Sources this place cannot read, each with why (`server.headers` has no `params` or `body`). */
  readonly unavailable?: Readonly<Record<string, string>>;
}

/** What compiling found out about an expression, beside its closure. */
export interface ExpressionTraits {
  /** It calls `fake.*`: faker must be loaded (`loadFaker()`) before it runs. */
  usesFaker: boolean;
  /** It draws from the random source (`uuid`, `randomInt`, `fake.*`). */
  usesRandom: boolean;
}

/** A refused expression: why, and at which offset of the whole string. */
export class ExpressionError extends Error {
  constructor(
    message: string,
    readonly offset: number,
  ) {
    super(message);
  }
}

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

/**
 * Turns a parsed expression into a closure, refusing (with {@link ExpressionError}) every name,
 * function or path the language does not allow. Runs once per config load; the closure does only
 * the reads and calls the expression names.
 */
export function compileNode(node: Node, options: ExpressionOptions, traits: ExpressionTraits): Evaluate {
  switch (node.type) {
    case 'literal': {
      const { value } = node;
      return () => value;
    }
    case 'name':
      return compileName(node.name, node.offset, options);
    case 'member':
      return compileMember(node, options, traits);
    case 'index': {
      if (node.object.type === 'name' && node.object.name === 'env')
        throw new ExpressionError('`env` takes a fixed name: env.MOCKAPI_NAME', startOf(node.key));
      const object = compileNode(node.object, options, traits);
      const key = compileNode(node.key, options, traits);
      const lower = node.object.type === 'name' && node.object.name === 'headers';
      return (ctx, i) => {
        const k = key(ctx, i);
        return readOwn(object(ctx, i), lower && typeof k === 'string' ? k.toLowerCase() : k);
      };
    }
    case 'call':
      return compileCall(node, startOf(node), options, traits);
    case 'binary': {
      const left = compileNode(node.left, options, traits);
      const right = compileNode(node.right, options, traits);
      if (node.op === '??')
        return (ctx, i) => {
          const l = left(ctx, i);
          return isNothing(l) ? right(ctx, i) : l;
        };
      if (node.op !== '+') return arithmetic(node.op, left, right);
      // `+` adds two numbers and joins anything else as text: "page " + 2 is "page 2".
      return (ctx, i) => {
        const l = left(ctx, i);
        const r = right(ctx, i);
        return typeof l === 'number' && typeof r === 'number' ? l + r : textOf(l) + textOf(r);
      };
    }
    case 'list': {
      const items = node.items.map((item) => compileNode(item, options, traits));
      return (ctx, i) => items.map((item) => item(ctx, i) ?? null);
    }
    case 'object': {
      const entries = node.entries.map(([key, value, offset]) => {
        if (FORBIDDEN_NAMES.has(key)) throw new ExpressionError(`\`${key}\` cannot be used as a key`, offset);
        return [key, compileNode(value, options, traits)] as const;
      });
      return (ctx, i) => Object.fromEntries(entries.map(([key, value]) => [key, value(ctx, i) ?? null]));
    }
  }
}

/**
 * `-`, `*` and `/` on numbers (numeric text is read as a number): anything else, a division by 0 or
 * a result too large to hold gives nothing, never an error.
 */
function arithmetic(op: '-' | '*' | '/', left: Evaluate, right: Evaluate): Evaluate {
  const apply =
    op === '-'
      ? (a: number, b: number) => a - b
      : op === '*'
        ? (a: number, b: number) => a * b
        : (a: number, b: number) => (b === 0 ? NaN : a / b);
  return (ctx, i) => {
    const a = numberOf(left(ctx, i));
    const b = numberOf(right(ctx, i));
    if (a === undefined || b === undefined) return undefined;
    const result = apply(a, b);
    return Number.isFinite(result) ? result : undefined;
  };
}

function compileName(name: string, offset: number, options: ExpressionOptions): Evaluate {
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

function compileMember(
  node: Extract<Node, { type: 'member' }>,
  options: ExpressionOptions,
  traits: ExpressionTraits,
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
  const object = compileNode(node.object, options, traits);
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

function compileCall(
  node: Extract<Node, { type: 'call' }>,
  start: number,
  options: ExpressionOptions,
  traits: ExpressionTraits,
): Evaluate {
  const { callee } = node;
  if (
    callee.type === 'member' &&
    callee.object.type === 'member' &&
    callee.object.object.type === 'name' &&
    callee.object.object.name === 'fake'
  ) {
    return compileFake(callee.object.key, callee.key, node, start, options, traits);
  }
  if (callee.type === 'member' && callee.object.type === 'name' && callee.object.name === 'fake') {
    throw new ExpressionError('`fake` needs a module and a method: fake.person.fullName()', start);
  }
  if (callee.type !== 'name')
    throw new ExpressionError('only the built-in functions and `fake.<module>.<method>` can be called', start);
  const builtin = Object.hasOwn(BUILTINS, callee.name) ? BUILTINS[callee.name] : undefined;
  if (builtin === undefined) {
    const hint = suggestField(callee.name, Object.keys(BUILTINS));
    throw new ExpressionError(
      `unknown function \`${callee.name}\`${hint === undefined ? `; the functions are ${Object.keys(BUILTINS).join(', ')} and fake.*` : `; did you mean \`${hint}\`?`}`,
      callee.offset,
    );
  }
  const count = node.args.length;
  if (count < builtin.minArgs || count > builtin.maxArgs) {
    const wanted =
      builtin.minArgs === builtin.maxArgs ? `${builtin.minArgs}` : `${builtin.minArgs} or ${builtin.maxArgs}`;
    throw new ExpressionError(
      `\`${callee.name}\` takes ${wanted} argument${builtin.maxArgs === 1 ? '' : 's'}, got ${count}`,
      callee.offset,
    );
  }
  const first = node.args[0];
  if (callee.name === 'date' && first?.type === 'literal' && parseOffset(first.value) === undefined) {
    throw new ExpressionError(
      `\`date\` takes an offset such as '-1d', '+2h', '30m' or a number of milliseconds, got ${JSON.stringify(first.value)}`,
      startOf(first),
    );
  }
  if (builtin.random === true) traits.usesRandom = true;
  const args = node.args.map((arg) => compileNode(arg, options, traits));
  const { run } = builtin;
  return (ctx, i) =>
    run(
      args.map((arg) => arg(ctx, i)),
      ctx,
    );
}

function compileFake(
  module: string,
  method: string,
  node: Extract<Node, { type: 'call' }>,
  start: number,
  options: ExpressionOptions,
  traits: ExpressionTraits,
): Evaluate {
  const refused = FAKER_REFUSED[`${module}.${method}`];
  if (refused !== undefined) throw new ExpressionError(`fake.${module}.${method} is not allowed: it ${refused}`, start);
  const methods = FAKER_API.get(module);
  if (methods === undefined) {
    const hint = suggestField(module, [...FAKER_API.keys()]);
    throw new ExpressionError(
      `unknown faker module \`${module}\`${hint === undefined ? '' : `; did you mean \`fake.${hint}\`?`}`,
      start,
    );
  }
  if (!methods.has(method)) {
    const hint = suggestField(method, [...methods]);
    throw new ExpressionError(
      `fake.${module} has no method \`${method}\`${hint === undefined ? `; it has ${[...methods].join(', ')}` : `; did you mean \`fake.${module}.${hint}\`?`}`,
      start,
    );
  }
  for (const arg of node.args) {
    if (!isConstant(arg))
      throw new ExpressionError(
        'the arguments of a `fake.` function must be fixed values (text, numbers, lists, objects), not read from the request',
        startOf(arg),
      );
  }
  traits.usesFaker = true;
  traits.usesRandom = true;
  // Arguments are rebuilt per call: faker may change what it is given (helpers.shuffle sorts in place).
  const args = node.args.map((arg) => compileNode(arg, options, traits));
  const call = fakerCall(module, method);
  return (ctx, i) =>
    call(
      args.map((arg) => arg(ctx, i)),
      ctx.random,
    );
}

/** Literals, and lists and objects of literals: what may be passed to faker. */
function isConstant(node: Node): boolean {
  if (node.type === 'literal') return true;
  if (node.type === 'list') return node.items.every(isConstant);
  if (node.type === 'object') return node.entries.every(([, value]) => isConstant(value));
  return false;
}
