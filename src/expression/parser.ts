import type { Node } from './ast.js';
import { LexError, Lexer, type Punct, type Token } from './lexer.js';

/** A syntax problem at an offset of the whole string. */
export interface SyntaxIssue {
  readonly message: string;
  readonly offset: number;
}

/** The expression of one `${…}` and where the text after its closing `}` starts. */
export type ParseResult =
  | { readonly ok: true; readonly node: Node; readonly end: number }
  | { readonly ok: false; readonly issue: SyntaxIssue };

/** Deeper nesting is refused rather than risking the stack on `((((…`. */
const MAX_DEPTH = 64;

class ParseError extends Error {
  constructor(
    message: string,
    readonly offset: number,
  ) {
    super(message);
  }
}

/**
 * Parses the expression that starts at `start` (just after `${`) up to its closing `}`.
 *
 *     expr     := additive ('??' additive)*
 *     additive := product (('+' | '-') product)*
 *     product  := postfix (('*' | '/') postfix)*
 *     postfix  := primary ('.' name | '[' expr ']' | '(' args ')')*
 *     primary  := number | '-' number | string | true | false | null | name
 *               | '(' expr ')' | '[' items ']' | '{' entries '}'
 *
 * `*` and `/` bind tighter than `+` and `-`, which bind tighter than `??`, as in JavaScript. A name
 * may hold `-` (`headers.x-request-id`), so `a-1` is a name: a subtraction is written `a - 1`. Which
 * names and calls are allowed is checked by the compiler, which knows the roots and functions.
 */
export function parseExpression(source: string, start: number): ParseResult {
  const lexer = new Lexer(source, start);
  try {
    const first = lexer.peek();
    if (first.kind === 'punct' && first.value === '}')
      throw new ParseError('empty expression: write something between `${` and `}`', first.offset);
    const node = new Parser(lexer).expression(0);
    const close = lexer.next();
    if (close.kind === 'end')
      throw new ParseError('`${` is not closed by `}` (write `$${` for a literal `${`)', start - 2);
    if (!(close.kind === 'punct' && close.value === '}'))
      throw new ParseError(`unexpected ${describe(close)}; expected \`}\``, close.offset);
    return { ok: true, node, end: close.offset + 1 };
  } catch (error) {
    if (error instanceof ParseError || error instanceof LexError)
      return { ok: false, issue: { message: error.message, offset: error.offset } };
    throw error;
  }
}

function describe(token: Token): string {
  if (token.kind === 'end') return 'end of text';
  if (token.kind === 'string') return 'text';
  return `\`${String(token.value)}\``;
}

function isPunct(token: Token, value: Punct): boolean {
  return token.kind === 'punct' && token.value === value;
}

class Parser {
  constructor(private readonly lexer: Lexer) {}

  expression(depth: number): Node {
    if (depth > MAX_DEPTH) throw new ParseError(`expression nested more than ${MAX_DEPTH} deep`, this.lexer.position);
    let left = this.additive(depth);
    while (isPunct(this.lexer.peek(), '??')) {
      const op = this.lexer.next();
      left = { type: 'binary', op: '??', left, right: this.additive(depth), offset: op.offset };
    }
    return left;
  }

  private additive(depth: number): Node {
    let left = this.product(depth);
    for (let next = this.lexer.peek(); isPunct(next, '+') || isPunct(next, '-'); next = this.lexer.peek()) {
      const op = this.lexer.next();
      left = { type: 'binary', op: op.value as '+' | '-', left, right: this.product(depth), offset: op.offset };
    }
    return left;
  }

  private product(depth: number): Node {
    let left = this.postfix(depth);
    for (let next = this.lexer.peek(); isPunct(next, '*') || isPunct(next, '/'); next = this.lexer.peek()) {
      const op = this.lexer.next();
      left = { type: 'binary', op: op.value as '*' | '/', left, right: this.postfix(depth), offset: op.offset };
    }
    return left;
  }

  private postfix(depth: number): Node {
    let node = this.primary(depth);
    for (;;) {
      const token = this.lexer.peek();
      if (isPunct(token, '.')) {
        this.lexer.next();
        const name = this.lexer.next();
        if (name.kind !== 'name')
          throw new ParseError(`expected a name after \`.\`, got ${describe(name)}`, name.offset);
        node = { type: 'member', object: node, key: name.value, offset: name.offset };
      } else if (isPunct(token, '[')) {
        this.lexer.next();
        const key = this.expression(depth + 1);
        this.expect(']');
        node =
          key.type === 'literal' && (typeof key.value === 'string' || typeof key.value === 'number')
            ? { type: 'member', object: node, key: String(key.value), offset: key.offset }
            : { type: 'index', object: node, key, offset: key.offset };
      } else if (isPunct(token, '(')) {
        this.lexer.next();
        node = { type: 'call', callee: node, args: this.items(')', depth), offset: node.offset };
      } else return node;
    }
  }

  private primary(depth: number): Node {
    const token = this.lexer.next();
    const { offset } = token;
    switch (token.kind) {
      case 'number':
      case 'string':
        return { type: 'literal', value: token.value, offset };
      case 'name':
        if (token.value === 'true' || token.value === 'false')
          return { type: 'literal', value: token.value === 'true', offset };
        if (token.value === 'null') return { type: 'literal', value: null, offset };
        return { type: 'name', name: token.value, offset };
      case 'punct':
        if (token.value === '-') {
          const number = this.lexer.next();
          if (number.kind !== 'number') throw new ParseError('`-` may only stand before a number', offset);
          return { type: 'literal', value: -number.value, offset };
        }
        if (token.value === '(') {
          const inner = this.expression(depth + 1);
          this.expect(')');
          return inner;
        }
        if (token.value === '[') return { type: 'list', items: this.items(']', depth), offset };
        if (token.value === '{') return { type: 'object', entries: this.entries(depth), offset };
        break;
      case 'end':
        break;
    }
    throw new ParseError(`unexpected ${describe(token)}; expected a value`, offset);
  }

  /** Comma-separated expressions up to `close` (a trailing comma is allowed). */
  private items(close: Punct, depth: number): Node[] {
    const items: Node[] = [];
    while (!isPunct(this.lexer.peek(), close)) {
      items.push(this.expression(depth + 1));
      if (!isPunct(this.lexer.peek(), close)) this.expect(',');
    }
    this.lexer.next();
    return items;
  }

  private entries(depth: number): Array<readonly [string, Node, number]> {
    const entries: Array<readonly [string, Node, number]> = [];
    while (!isPunct(this.lexer.peek(), '}')) {
      const key = this.lexer.next();
      if (key.kind !== 'name' && key.kind !== 'string')
        throw new ParseError(`expected a key, got ${describe(key)}`, key.offset);
      this.expect(':');
      entries.push([key.value, this.expression(depth + 1), key.offset]);
      if (!isPunct(this.lexer.peek(), '}')) this.expect(',');
    }
    this.lexer.next();
    return entries;
  }

  private expect(value: Punct): void {
    const token = this.lexer.next();
    if (!isPunct(token, value))
      throw new ParseError(`unexpected ${describe(token)}; expected \`${value}\``, token.offset);
  }
}
