/**
 * The expression compiler: a parsed `${…}` expression turned into a closure once per config
 * load, refusing every name, function or path the language does not allow. Names and members are
 * compiled in compile-names.ts, calls in compile-calls.ts; the options, traits and error are in
 * compile-types.ts and re-exported here, where the rest of the code imports them from.
 */
import { startOf, type Node } from './ast.js';
import { FORBIDDEN_NAMES, isNothing, numberOf, readOwn, textOf } from './values.js';
import {
  ExpressionError,
  type Evaluate,
  type ExpressionOptions,
  type ExpressionTraits,
  type SubCompile,
} from './compile-types.js';
import { compileMember, compileName } from './compile-names.js';
import { compileCall } from './compile-calls.js';

export { ExpressionError, type Evaluate, type ExpressionOptions, type ExpressionTraits } from './compile-types.js';
export { unknownParam, unknownScenario } from './compile-names.js';

/**
 * Turns a parsed expression into a closure, refusing (with {@link ExpressionError}) every name,
 * function or path the language does not allow. Runs once per config load; the closure does only
 * the reads and calls the expression names.
 */
export function compileNode(node: Node, options: ExpressionOptions, traits: ExpressionTraits): Evaluate {
  const sub = (n: Node): Evaluate => compileNode(n, options, traits);
  switch (node.type) {
    case 'literal': {
      const { value } = node;
      return () => value;
    }
    case 'name':
      return compileName(node.name, node.offset, options);
    case 'member':
      return compileMember(node, options, sub);
    case 'index': {
      if (node.object.type === 'name' && node.object.name === 'env')
        throw new ExpressionError('`env` takes a fixed name: env.MOCKAPI_NAME', startOf(node.key));
      const object = sub(node.object);
      const key = sub(node.key);
      const lower = node.object.type === 'name' && node.object.name === 'headers';
      return (ctx, i) => {
        const k = key(ctx, i);
        return readOwn(object(ctx, i), lower && typeof k === 'string' ? k.toLowerCase() : k);
      };
    }
    case 'call':
      return compileCall(node, startOf(node), traits, sub);
    case 'binary':
      return compileBinary(node, sub);
    case 'list': {
      const items = node.items.map(sub);
      return (ctx, i) => items.map((item) => item(ctx, i) ?? null);
    }
    case 'object': {
      const entries = node.entries.map(([key, value, offset]) => {
        if (FORBIDDEN_NAMES.has(key)) throw new ExpressionError(`\`${key}\` cannot be used as a key`, offset);
        return [key, sub(value)] as const;
      });
      return (ctx, i) => Object.fromEntries(entries.map(([key, value]) => [key, value(ctx, i) ?? null]));
    }
  }
}

/** `??`, and `+`, `-`, `*`, `/`. */
function compileBinary(node: Extract<Node, { type: 'binary' }>, sub: SubCompile): Evaluate {
  const left = sub(node.left);
  const right = sub(node.right);
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
