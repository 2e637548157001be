import { compileString, compileTemplate, type CompiledString, type CompiledTemplate } from '../expression/index.js';
import { BASE62, randomBase62 } from '../expression/functions.js';
import { firstAnswerDraws } from '../seeded.js';
import type { ErrorTemplateConfig } from '../config/types.js';
import type { ResourceContext } from './context.js';
import type { ResourceConfig, ResourceMoveConfig, ResourcesConfig, ResourceSendConfig } from './model.js';
import { compilePath, type PathMatcher } from './paths.js';
import { collectionParams } from '../config/collection-path.js';
import { resourceExpressionOptions } from '../config/rules-resources.js';
import { STYLES, type Style } from './styles.js';
import { acceptedValues } from './when.js';
import { compileObjectWhen, type ObjectTest } from '../expression/object-when.js';

/**
 * A collection compiled once per config load: its path matcher, style, id maker, defaults,
 * actions and lifecycle moves with every `${…}` compiled, and the names messages use.
 */

/** A `send` item ready to fire. */
export interface CompiledResourceSend {
  readonly event: string;
  readonly to?: string;
  readonly afterMs: number;
  readonly data?: CompiledTemplate;
}

export interface CompiledAction {
  readonly name: string;
  readonly set?: CompiledTemplate;
  readonly when?: ObjectTest;
  /** Each field `when` tests (`status` first), for the refusal's message: the one that fails is named. */
  readonly whenFields?: readonly WhenField[];
  readonly send: readonly CompiledResourceSend[];
}

/** One field of an action's `when`: its path, its own test, and the values it accepts (`open`; `{ in: [...] }`). */
export interface WhenField {
  readonly field: string;
  readonly test: ObjectTest;
  readonly accepted?: readonly unknown[];
}

export interface CompiledMove {
  readonly index: number;
  readonly from: string;
  readonly afterMs: number;
  /** A fixed status, or weights to draw from. */
  readonly to: string | ReadonlyArray<readonly [string, number]>;
  readonly set?: CompiledTemplate;
  readonly when?: ObjectTest;
  readonly send: readonly CompiledResourceSend[];
  readonly field: string;
}

export interface CompiledResource {
  readonly config: ResourceConfig;
  readonly name: string;
  readonly style: Style;
  readonly matcher: PathMatcher;
  /** The path's parameter names. */
  readonly params: readonly string[];
  /** What the objects are called in messages and events: `customer`, `payment_intent`. */
  readonly label: string;
  /** The new object's id, from its context (`n`: its position in the collection). */
  makeId(ctx: ResourceContext, n: number): string | number;
  /** The key of its objects' random source (`resource <name>`): made once, not per request. */
  readonly randomKey: string;
  /**
   * The defaults of a new object. Parts without `${…}` are the config's own (frozen) values: merge
   * them into a new object (mergeFields), never change them.
   */
  defaults(ctx: ResourceContext, id: string | number): Record<string, unknown>;
  /**
   * When neither the id nor the defaults read the request (no `id` expression, a style with drawn
   * ids, `fields` without expressions): the defaults (the config's own, frozen: never change them)
   * and the n-th object's default id, the same as `makeId` and `defaults` give, made without a
   * context (a create then makes none).
   */
  readonly plain?: {
    readonly defaults: Record<string, unknown>;
    id(seed: number, n: number): string;
    /**
     * `{ id, ...defaults }` (a placeholder id), when the defaults have neither an `id` nor a field
     * named like an array index: a create's object is a copy of it (`{ ...base }`, one step for
     * V8, in this key order) with its id set. Never handed out, never changed.
     */
    readonly base?: Record<string, unknown>;
  };
  readonly actions: ReadonlyMap<string, CompiledAction>;
  /** The moves of the lifecycle, in config order. */
  readonly moves: readonly CompiledMove[];
  readonly notFound?: {
    readonly status?: number;
    readonly headers: ReadonlyArray<readonly [string, CompiledString]>;
    readonly body?: CompiledTemplate;
  };
  /** The fields that hold a status a move reads (`status`): when one changes, the object entered a new status. */
  readonly statusFields: readonly string[];
  /** Whether any expression of the collection reads `resources.` (a shared store then loads them first). */
  readonly readsCollections: boolean;
}

/** `payment_intents` → `payment_intent`, `batches` → `batch`, `companies` → `company`. */
export function singular(name: string): string {
  if (/ies$/.test(name)) return `${name.slice(0, -3)}y`;
  if (/(ch|sh|ss|x)es$/.test(name)) return name.slice(0, -2);
  if (/s$/.test(name) && !/ss$/.test(name)) return name.slice(0, -1);
  return name;
}

function template(value: unknown, options: ReturnType<typeof resourceExpressionOptions>): CompiledTemplate {
  const compiled = compileTemplate(value, options);
  if (!compiled.ok) throw new Error(`unvalidated resource template: ${compiled.issues[0]?.message ?? ''}`); // the rules checked it
  return compiled.value;
}

function compileSends(
  sends: readonly ResourceSendConfig[],
  options: ReturnType<typeof resourceExpressionOptions>,
): CompiledResourceSend[] {
  return sends.map((send) => ({
    event: send.event,
    ...(send.to === undefined ? {} : { to: send.to }),
    afterMs: send.afterMs,
    ...(send.hasData ? { data: template(send.data, options) } : {}),
  }));
}

function test(when: Record<string, unknown> | undefined): ObjectTest | undefined {
  if (when === undefined) return undefined;
  const compiled = compileObjectWhen(when, ['when']);
  if (!compiled.ok) throw new Error(`unvalidated resource when: ${compiled.issues[0]?.message ?? ''}`);
  return compiled.value;
}

/** The fields of a `when`, each with its own test; `status` first, as the message names it when it fails. */
function whenFields(when: Record<string, unknown> | undefined): WhenField[] | undefined {
  if (when === undefined) return undefined;
  const fields = Object.keys(when).sort((a, b) => Number(b === 'status') - Number(a === 'status'));
  return fields.map((field) => {
    const accepted = acceptedValues(when, field);
    return {
      field,
      test: test({ [field]: when[field] }) as ObjectTest,
      ...(accepted === undefined ? {} : { accepted }),
    };
  });
}

function compileMove(
  move: ResourceMoveConfig,
  index: number,
  options: ReturnType<typeof resourceExpressionOptions>,
): CompiledMove {
  const when = test(move.when);
  return {
    index,
    from: move.from,
    afterMs: move.afterMs,
    to: typeof move.to === 'string' ? move.to : Object.entries(move.to).filter(([, weight]) => weight > 0),
    ...(Object.keys(move.set).length === 0 ? {} : { set: template(move.set, options) }),
    ...(when === undefined ? {} : { when }),
    send: compileSends(move.send, options),
    field: move.field,
  };
}

function compileNotFound(
  notFound: ErrorTemplateConfig | undefined,
  options: ReturnType<typeof resourceExpressionOptions>,
): CompiledResource['notFound'] {
  if (notFound === undefined) return undefined;
  const errorOptions = { ...options, errorSources: true, allowResource: false };
  const headers = Object.entries(notFound.headers).map(([name, value]) => {
    const compiled = compileString(value, errorOptions);
    if (!compiled.ok) throw new Error(`unvalidated resource header: ${compiled.issue.message}`);
    return [name.toLowerCase(), compiled.value] as const;
  });
  return {
    ...(notFound.status === undefined ? {} : { status: notFound.status }),
    headers,
    ...(notFound.hasBody ? { body: template(notFound.body, errorOptions) } : {}),
  };
}

/** How many base62 characters follow the prefix of a default id (`cus_` and 14). */
const DEFAULT_ID_LENGTH = 14;

/**
 * The default id of the n-th object of a collection, `<prefix>_` and {@link DEFAULT_ID_LENGTH}
 * base62 characters: the characters `randomBase62` draws from the object's random source
 * (`createAnswerRandom(seed, randomKey, n)`), drawn without making the source, and made as one flat
 * string (joined to the prefix, a rope of two kept in every object).
 */
function defaultIdMaker(prefix: string, randomKey: string): (seed: number, n: number) => string {
  // Reused by every id of the collection: each is made at once, start to end.
  const draws = new Uint32Array(DEFAULT_ID_LENGTH);
  const codes: number[] = [...`${prefix}_`].map((c) => c.charCodeAt(0));
  const at = codes.length;
  for (let i = 0; i < DEFAULT_ID_LENGTH; i++) codes.push(0);
  return (seed, n) => {
    firstAnswerDraws(seed, randomKey, n, draws);
    for (let i = 0; i < DEFAULT_ID_LENGTH; i++) codes[at + i] = BASE62.charCodeAt((draws[i] as number) % BASE62.length);
    return String.fromCharCode.apply(null, codes);
  };
}

/** A collection's {@link CompiledResource.plain}: its defaults, its id maker and, where it can have one, its base. */
function plainParts(
  defaults: Record<string, unknown>,
  id: (seed: number, n: number) => string,
): NonNullable<CompiledResource['plain']> {
  // (V8 lists keys named like array indexes first: the copy would not have the id in front)
  const index = Object.keys(defaults).some((key) => /^(?:0|[1-9]\d{0,9})$/.test(key) && Number(key) < 4294967295);
  if (index || Object.hasOwn(defaults, 'id')) return { defaults, id };
  return { defaults, id, base: { id: '', ...defaults } };
}

/** Compiles one collection of a validated config. */
export function compileResource(
  config: ResourceConfig,
  names: readonly string[],
  scenarios: readonly string[],
): CompiledResource {
  const params = collectionParams(config.path) ?? [];
  const options = resourceExpressionOptions(params, names, scenarios);
  const style = STYLES[config.style];
  const fixedObject =
    typeof config.fields.object === 'string' && !config.fields.object.includes('${') ? config.fields.object : undefined;
  const label = fixedObject ?? singular(config.name);
  const prefix = config.name.replace(/[^A-Za-z0-9]/g, '').slice(0, 3) || 'obj';
  const idExpression = config.id === undefined ? undefined : compileString(config.id, options);
  if (idExpression !== undefined && !idExpression.ok)
    throw new Error(`unvalidated resource id: ${idExpression.issue.message}`);
  const makeId = (ctx: ResourceContext, n: number): string | number => {
    if (idExpression !== undefined) {
      const value = idExpression.value.evaluate(ctx);
      return typeof value === 'number' ? value : String(value ?? '');
    }
    return style.name === 'github' ? n : `${prefix}_${randomBase62(ctx.random, DEFAULT_ID_LENGTH)}`;
  };
  const fields = template(config.fields, options);
  const randomKey = `resource ${config.name}`;
  const plain =
    idExpression === undefined && style.name !== 'github' && fields.static
      ? plainParts(
          fields.evaluate(undefined as unknown as ResourceContext) as Record<string, unknown>, // (static: reads nothing)
          defaultIdMaker(prefix, randomKey),
        )
      : undefined;
  const actions = new Map<string, CompiledAction>();
  for (const action of config.actions) {
    const when = test(action.when);
    const fields = whenFields(action.when);
    actions.set(action.name, {
      name: action.name,
      ...(Object.keys(action.set).length === 0 ? {} : { set: template(action.set, options) }),
      ...(when === undefined ? {} : { when }),
      ...(fields === undefined ? {} : { whenFields: fields }),
      send: compileSends(action.send, options),
    });
  }
  const notFound = compileNotFound(config.notFound, options);
  return {
    config,
    name: config.name,
    style,
    matcher: compilePath(
      config.path,
      config.actions.map((a) => a.name),
    ),
    params,
    label,
    makeId,
    randomKey,
    // Only fields with expressions read the context; `resource.id` is the new object's id.
    defaults: (ctx, id) =>
      (fields.static ? fields.evaluate(ctx) : fields.evaluate(ctx.with({ id }))) as Record<string, unknown>,
    ...(plain === undefined ? {} : { plain }),
    actions,
    moves: config.lifecycle.map((move, i) => compileMove(move, i, options)),
    statusFields: [...new Set(['status', ...config.lifecycle.map((move) => move.field)])],
    ...(notFound === undefined ? {} : { notFound }),
    readsCollections: JSON.stringify(config).includes('resources.'),
  };
}

/** Compiles every collection of a config. */
export function compileResources(
  config: ResourcesConfig | undefined,
  scenarios: readonly string[],
): CompiledResource[] {
  if (config === undefined) return [];
  const names = config.collections.map((c) => c.name);
  return config.collections.map((collection) => compileResource(collection, names, scenarios));
}
