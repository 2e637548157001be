/**
 * Maps a character offset inside a YAML string value back to its offset in the source text, so an
 * issue inside a `${…}` expression points at its column in the file (file, line, column).
 */

/** Escapes of a double-quoted YAML scalar, by the character after `\`, and how many source characters they take. */
const ESCAPE_LENGTH: Record<string, number> = { x: 4, u: 6, U: 10 };

/**
 * The source offset of character `offset` of the scalar written between `start` and `end` in
 * `source`, for the scalar styles of the `yaml` package (`PLAIN`, `QUOTE_DOUBLE`, `QUOTE_SINGLE`,
 * `BLOCK_LITERAL`, `BLOCK_FOLDED`). A line break with the indentation after it counts as one
 * character of the value (a folded space or newline); that is exact for the usual single-line
 * expression and close for the rest.
 */
export function sourceOffsetOf(source: string, start: number, end: number, type: string, offset: number): number {
  let i = start;
  if (type === 'QUOTE_DOUBLE' || type === 'QUOTE_SINGLE') i += 1;
  else if (type === 'BLOCK_LITERAL' || type === 'BLOCK_FOLDED') {
    const header = source.indexOf('\n', start);
    if (header === -1) return start;
    i = skipIndent(source, header + 1);
  }
  let left = offset;
  while (left > 0 && i < end) {
    const c = source[i];
    if (c === '\n' || c === '\r') {
      i = skipIndent(source, source[i] === '\r' && source[i + 1] === '\n' ? i + 2 : i + 1);
    } else if (type === 'QUOTE_DOUBLE' && c === '\\') {
      i += ESCAPE_LENGTH[source[i + 1] ?? ''] ?? 2;
    } else if (type === 'QUOTE_SINGLE' && c === "'" && source[i + 1] === "'") {
      i += 2;
    } else {
      i += 1;
    }
    left--;
  }
  return Math.min(i, Math.max(end - 1, start));
}

function skipIndent(source: string, from: number): number {
  let i = from;
  while (source[i] === ' ' || source[i] === '\t') i++;
  return i;
}
