/** One token of an expression; `offset` is its first character's index in the whole string. */
export type Token =
  | { readonly kind: 'number'; readonly value: number; readonly offset: number }
  | { readonly kind: 'string'; readonly value: string; readonly offset: number }
  | { readonly kind: 'name'; readonly value: string; readonly offset: number }
  | { readonly kind: 'punct'; readonly value: Punct; readonly offset: number }
  | { readonly kind: 'end'; readonly value: ''; readonly offset: number };

/** The operators and punctuation an expression may use. Nothing else is a token. */
export type Punct = '.' | '[' | ']' | '(' | ')' | '{' | '}' | ',' | ':' | '??' | '+' | '-' | '*' | '/';

/** A lexing problem, at the offset of the character that could not start or end a token. */
export class LexError extends Error {
  constructor(
    message: string,
    readonly offset: number,
  ) {
    super(message);
  }
}

const PUNCT = new Set<string>(['.', '[', ']', '(', ')', '{', '}', ',', ':', '+', '-', '*', '/']);
const ESCAPES: Record<string, string> = {
  n: '\n',
  t: '\t',
  r: '\r',
  '\\': '\\',
  "'": "'",
  '"': '"',
  '0': '\0',
  $: '$',
};
const NUMBER_RE = /(?:\d+(?:\.\d+)?|\.\d+)(?:[eE][+-]?\d+)?/y;
/** Names may hold `-` after their first character (`headers.x-request-id`): a subtraction needs a space before its `-`. */
const NAME_RE = /[A-Za-z_$][\w$-]*/y;

/**
 * Reads tokens from `source` starting at `start`, one at a time, so the template scanner can stop
 * at the `}` that closes a `${…}` and go on with the text after it. Throws {@link LexError}, which
 * the parser turns into an issue: the lexer is internal and never seen by callers.
 */
export class Lexer {
  private pos: number;
  private peeked: Token | undefined;

  constructor(
    private readonly source: string,
    start: number,
  ) {
    this.pos = start;
  }

  /** Where the next unread character is (after the last token taken). */
  get position(): number {
    return this.peeked === undefined ? this.pos : this.peeked.offset;
  }

  peek(): Token {
    this.peeked ??= this.read();
    return this.peeked;
  }

  next(): Token {
    const token = this.peek();
    this.peeked = undefined;
    return token;
  }

  private read(): Token {
    const s = this.source;
    while (this.pos < s.length && /\s/.test(s[this.pos] as string)) this.pos++;
    const offset = this.pos;
    if (offset >= s.length) return { kind: 'end', value: '', offset };
    const ch = s[offset] as string;
    if (ch === '?' && s[offset + 1] === '?') {
      this.pos += 2;
      return { kind: 'punct', value: '??', offset };
    }
    if (ch === "'" || ch === '"') return this.readString(ch, offset);
    if (/[\d]/.test(ch) || (ch === '.' && /\d/.test(s[offset + 1] ?? ''))) {
      NUMBER_RE.lastIndex = offset;
      const m = NUMBER_RE.exec(s) as RegExpExecArray;
      this.pos = offset + m[0].length;
      if (/[\w$]/.test(s[this.pos] ?? ''))
        throw new LexError(`a number cannot be followed by \`${s[this.pos] as string}\``, this.pos);
      return { kind: 'number', value: Number(m[0]), offset };
    }
    NAME_RE.lastIndex = offset;
    const name = NAME_RE.exec(s);
    if (name !== null) {
      this.pos = offset + name[0].length;
      return { kind: 'name', value: name[0], offset };
    }
    if (PUNCT.has(ch)) {
      this.pos++;
      return { kind: 'punct', value: ch as Punct, offset };
    }
    throw new LexError(`unexpected character \`${ch}\``, offset);
  }

  private readString(quote: string, offset: number): Token {
    const s = this.source;
    let out = '';
    let i = offset + 1;
    while (i < s.length) {
      const ch = s[i] as string;
      if (ch === quote) {
        this.pos = i + 1;
        return { kind: 'string', value: out, offset };
      }
      if (ch !== '\\') {
        out += ch;
        i++;
        continue;
      }
      const esc = s[i + 1] ?? '';
      if (esc === 'u' && /^[0-9a-fA-F]{4}$/.test(s.slice(i + 2, i + 6))) {
        out += String.fromCharCode(parseInt(s.slice(i + 2, i + 6), 16));
        i += 6;
      } else if (Object.hasOwn(ESCAPES, esc)) {
        out += ESCAPES[esc] as string;
        i += 2;
      } else throw new LexError(`unknown escape \`\\${esc}\` in a string`, i);
    }
    throw new LexError('this string has no closing quote', offset);
  }
}
