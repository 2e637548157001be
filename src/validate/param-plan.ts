/**
 * A parameter of an operation planned for reading ({@link ParamPlan}): its types, style, explode,
 * delimiter, the properties of an exploded object, the text its schema takes as a number, and for
 * a schema of alternatives each alternative planned on its own. Worked out once per operation, when
 * it is first validated (compile-operation.ts); params.ts reads requests with these plans.
 */
import { deref, isObject, type Json, type JsonObject } from '../description/json-pointer.js';
import { numberGuideOf, numberTextOf, type NumberGuide } from './number-text.js';
import type { ViolationPlace } from './violations.js';

/** Where a parameter is. */
export type ParamPlace = Exclude<ViolationPlace, 'body'>;

/** One parameter, with what reading it needs worked out. */
export interface ParamPlan {
  /** Its name as the description writes it. */
  name: string;
  /** Its name in the object validated: lower case for a header. */
  key: string;
  /** Its schema allows an array: a `simple` value is split at commas. */
  isArray: boolean;
  isObject: boolean;
  style: string;
  explode: boolean;
  /** An object read from several query names (`deepObject`, or exploded `form`). */
  spread: boolean;
  /** `name[`: the start of a `deepObject` parameter's query names. */
  prefix: string;
  /** For an exploded `form` object: the properties its schema names (undefined: none are read). */
  properties: JsonObject | undefined;
  delimiter: RegExp;
  /** The text its schema takes as a number (an `integer` or `number` schema): anything else is no number. */
  numberText?: RegExp;
  /** The same for each item of an array. */
  itemNumberText?: RegExp;
  /** For a spread object (`deepObject`, exploded `form`): where its members want numbers. */
  memberNumbers?: NumberGuide;
  /**
   * For a schema of alternatives (`oneOf`/`anyOf`): each alternative read as its own schema says
   * (`oneOf: [string, array of string]` reads `79,284` as a string for the first, a list for the
   * second). A serialized value cannot say which alternative the client meant, so the parameter is
   * valid when one of them holds (request.ts).
   */
  branches?: Array<{ plan: ParamPlan; pointer: string }>;
}

function typesOf(doc: JsonObject, schema: Json | undefined): string[] {
  const node = deref(doc, schema);
  if (!isObject(node)) return [];
  if (typeof node.type === 'string') return [node.type];
  if (Array.isArray(node.type)) return node.type.filter((t): t is string => typeof t === 'string');
  for (const key of ['allOf', 'oneOf', 'anyOf'] as const) {
    const list = node[key];
    if (Array.isArray(list))
      for (const item of list) {
        const found = typesOf(doc, item);
        if (found.length > 0) return found;
      }
  }
  return [];
}

const DELIMITERS: Record<string, RegExp> = { form: /,/, simple: /,/, spaceDelimited: / /, pipeDelimited: /\|/ };

/**
 * What reading `param` at `place` needs, worked out once. `schemaPointer`, the canonical pointer of
 * its schema, gives a schema of alternatives its {@link ParamPlan.branches}.
 */
export function planParam(doc: JsonObject, place: ParamPlace, param: JsonObject, schemaPointer?: string): ParamPlan {
  const plan = planOne(doc, place, param);
  const schema = deref(doc, param.schema);
  if (schemaPointer === undefined || !isObject(schema)) return plan;
  const key = Array.isArray(schema.oneOf) ? 'oneOf' : Array.isArray(schema.anyOf) ? 'anyOf' : undefined;
  const list = key === undefined ? [] : (schema[key] as Json[]);
  if (key === undefined || list.length < 2) return plan;
  plan.branches = list.map((branch, i) => ({
    plan: planOne(doc, place, { ...param, schema: branch }),
    pointer: `${schemaPointer}/${key}/${i}`,
  }));
  return plan;
}

function planOne(doc: JsonObject, place: ParamPlace, param: JsonObject): ParamPlan {
  const name = String(param.name);
  const types = typesOf(doc, param.schema);
  const style = typeof param.style === 'string' ? param.style : 'form';
  const explode = typeof param.explode === 'boolean' ? param.explode : style === 'form';
  const spread = style === 'deepObject' || (types.includes('object') && style === 'form' && explode);
  let properties: JsonObject | undefined;
  const schema = deref(doc, param.schema);
  if (spread && style !== 'deepObject' && isObject(schema) && isObject(schema.properties))
    properties = schema.properties;
  return {
    numberText: numberTextOf(doc, schema),
    itemNumberText: isObject(schema) ? numberTextOf(doc, schema.items) : undefined,
    ...(spread ? { memberNumbers: numberGuideOf(doc, schema) } : {}),
    name,
    key: place === 'header' ? name.toLowerCase() : name,
    isArray: types.includes('array'),
    isObject: types.includes('object'),
    style,
    explode,
    spread,
    prefix: `${name}[`,
    properties,
    delimiter: DELIMITERS[style] ?? /,/,
  };
}

/** How a path parameter's style writes it, for a violation: `;x=…`, `.…`. */
export function styleShape(plan: ParamPlan): string {
  return plan.style === 'matrix' ? `;${plan.name}=…` : '.…';
}
