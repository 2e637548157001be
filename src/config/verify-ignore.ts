/**
 * The grammar of a `verify.ignore` entry: what a comparison leaves out, with everything under it.
 * The config's rules check an entry with it (config/rules-verify.ts); src/verify/ignore.ts matches
 * paths with what it reads.
 *
 * - A JSON path: `$.user.name`, `$.items[].id` (`[*]` and `[0]` read as `[]`), `$["odd key"]`,
 *   `$.users.*.email` (`*` is any one field, or the items of an array), `$..etag` (`..`: at any
 *   depth). A `*` inside a name is a wildcard: `$.data[].*_at`.
 * - A field name alone (`updated_at`, `*_at`): that field at any depth, as `$..updated_at`.
 */

/** One step of a parsed pattern: a field name glob, the items of an array, or any number of steps. */
export type IgnoreStep = { name: RegExp; any: boolean } | { items: true } | { deep: true };

const escape = (s: string) => s.replace(/[.+?^${}()|[\]\\]/g, '\\$&');
const glob = (name: string): IgnoreStep => ({
  name: new RegExp(`^${escape(name).replace(/\*/g, '.*')}$`),
  any: name === '*',
});

/** Reads one `[…]` step at `i`; returns the step and where the text goes on, or a problem. */
function bracket(text: string, i: number): { step: IgnoreStep; next: number } | string {
  const close = text.indexOf(']', i);
  if (close === -1) return 'has a `[` without its `]`';
  const inner = text.slice(i + 1, close).trim();
  if (inner === '' || inner === '*' || /^\d+$/.test(inner)) return { step: { items: true }, next: close + 1 };
  const quoted = /^"((?:[^"\\]|\\.)*)"$|^'([^']*)'$/.exec(inner);
  if (quoted === null)
    return `has \`[${inner}]\`: write \`[]\` for the items of a list, or a quoted field name such as ["odd name"]`;
  if (quoted[1] !== undefined) {
    try {
      return {
        step: { name: new RegExp(`^${escape(JSON.parse(`"${quoted[1]}"`) as string)}$`), any: false },
        next: close + 1,
      };
    } catch {
      return `has a field name that is not a valid quoted string: ${inner}`;
    }
  }
  return { step: { name: new RegExp(`^${escape(quoted[2] as string)}$`), any: false }, next: close + 1 };
}

/** Parses one entry of `verify.ignore`; a string says what is wrong with it. */
export function parseIgnore(entry: string): IgnoreStep[] | string {
  const text = entry.trim();
  if (text === '') return 'must not be empty';
  if (!text.startsWith('$')) {
    if (/[.[\]]/.test(text))
      return 'must be a JSON path starting with `$` (such as $.user.name) or a field name alone (such as updated_at)';
    return [{ deep: true }, glob(text)];
  }
  const steps: IgnoreStep[] = [];
  let i = 1;
  while (i < text.length) {
    const ch = text[i];
    if (ch === '[') {
      const read = bracket(text, i);
      if (typeof read === 'string') return read;
      steps.push(read.step);
      i = read.next;
      continue;
    }
    if (ch !== '.') return `has \`${ch}\` where a \`.\` or \`[\` was expected, at character ${i + 1}`;
    if (text[i + 1] === '.') {
      steps.push({ deep: true });
      i += 2;
      if (text[i] === '[') continue;
    } else i += 1;
    const m = /^[^.[\]]+/.exec(text.slice(i));
    if (m === null) return `has a \`.\` without a field name after it, at character ${i}`;
    steps.push(glob(m[0]));
    i += m[0].length;
  }
  if (steps.length > 0 && 'deep' in (steps[steps.length - 1] as IgnoreStep)) return 'must not end with `..`';
  return steps;
}
