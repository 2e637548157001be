import type { RequestContext } from './context.js';
import {
  compileNode,
  ExpressionError,
  type Evaluate,
  type ExpressionOptions,
  type ExpressionTraits,
} from './compile.js';
import { parseExpression } from './parser.js';
import { textOf } from './values.js';

/**
 * A string of the config compiled: `evaluate` gives its value for a request. A string that is
 * exactly one `${…}` keeps the value's type (nothing becomes `null`); any other string with
 * expressions is text with each value interpolated (nothing becomes ""). A string without
 * expressions is `constant` and `evaluate` returns its text (with `$${` turned into `${`).
 */
export interface CompiledString extends ExpressionTraits {
  readonly kind: 'constant' | 'typed' | 'text';
  readonly evaluate: (ctx: RequestContext, index?: number) => unknown;
  /** The text of a `constant` string (escapes resolved). */
  readonly text?: string;
}

/** A problem in a string, at a 0-based offset within it. */
export interface StringIssue {
  readonly message: string;
  readonly offset: number;
}

export type StringResult =
  { readonly ok: true; readonly value: CompiledString } | { readonly ok: false; readonly issue: StringIssue };

/** Whether `text` holds `${` or `$${`, i.e. whether compiling it could change it. */
export function hasTemplateSyntax(text: string): boolean {
  return text.includes('${');
}

/**
 * Compiles one string of the config. `$${` writes a literal `${`; a `$` not followed by `{` is
 * plain text. The first problem found is returned with its offset.
 */
export function compileString(text: string, options: ExpressionOptions = {}): StringResult {
  const traits: ExpressionTraits = { usesFaker: false, usesRandom: false };
  const parts: Array<string | Evaluate> = [];
  let literal = '';
  let i = 0;
  try {
    while (i < text.length) {
      const at = text.indexOf('$', i);
      if (at === -1) break;
      literal += text.slice(i, at);
      if (text.startsWith('$${', at)) {
        literal += '${';
        i = at + 3;
      } else if (text[at + 1] === '{') {
        const parsed = parseExpression(text, at + 2);
        if (!parsed.ok) return { ok: false, issue: parsed.issue };
        if (literal !== '') parts.push(literal);
        literal = '';
        parts.push(compileNode(parsed.node, options, traits));
        i = parsed.end;
      } else {
        literal += '$';
        i = at + 1;
      }
    }
  } catch (error) {
    if (error instanceof ExpressionError) return { ok: false, issue: { message: error.message, offset: error.offset } };
    throw error;
  }
  literal += text.slice(i);
  if (literal !== '') parts.push(literal);
  return { ok: true, value: { ...traits, ...assemble(parts) } };
}

function assemble(parts: ReadonlyArray<string | Evaluate>): Pick<CompiledString, 'kind' | 'evaluate' | 'text'> {
  const [only] = parts;
  if (parts.length === 0) return { kind: 'constant', text: '', evaluate: () => '' };
  if (parts.length === 1 && typeof only === 'string') return { kind: 'constant', text: only, evaluate: () => only };
  if (parts.length === 1 && typeof only === 'function')
    return { kind: 'typed', evaluate: (ctx, index) => only(ctx, index) ?? null };
  return {
    kind: 'text',
    evaluate: (ctx, index) => {
      let out = '';
      for (const part of parts) out += typeof part === 'string' ? part : textOf(part(ctx, index));
      return out;
    },
  };
}
