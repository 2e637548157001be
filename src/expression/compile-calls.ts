/**
 * Compiling a call: one of the built-in functions (`uuid()`, `date('-1d')`, `randomInt(1, 6)`, …)
 * with its number of arguments checked, or `fake.<module>.<method>(…)` with the module and method
 * checked against faker's API and its arguments fixed values. Anything else is refused.
 */
import { suggestField } from '../suggest-field.js';
import { startOf, type Node } from './ast.js';
import { FAKER_API, FAKER_REFUSED } from './faker-api.js';
import { fakerCall } from './faker.js';
import { BUILTINS, parseOffset } from './functions.js';
import { ExpressionError, type Evaluate, type ExpressionTraits, type SubCompile } from './compile-types.js';

/** A call of a built-in function or of `fake.<module>.<method>`; `start` is where the call starts. */
export function compileCall(
  node: Extract<Node, { type: 'call' }>,
  start: number,
  traits: ExpressionTraits,
  sub: SubCompile,
): Evaluate {
  const { callee } = node;
  if (
    callee.type === 'member' &&
    callee.object.type === 'member' &&
    callee.object.object.type === 'name' &&
    callee.object.object.name === 'fake'
  ) {
    return compileFake(callee.object.key, callee.key, node, start, traits, sub);
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
  const args = node.args.map(sub);
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
  traits: ExpressionTraits,
  sub: SubCompile,
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
  const args = node.args.map(sub);
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
