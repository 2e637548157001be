/**
 * Form values typed as the values they replace ({@link typeForm}): numbers, booleans, nested as
 * the hint is; text everywhere else.
 */
import { BadInput } from './form-limits.js';

type Obj = Record<string, unknown>;

/** A form's integer: an optional minus and decimal digits. */
const INTEGER = /^-?\d+$/;
/** A form's number: an optional minus, decimal digits and a fraction (`12.5`, `.5`, `3.`). */
const DECIMAL = /^-?(?:\d+\.?\d*|\.\d+)$/;

/**
 * Form values with the type of what they replace: a number where `hint` holds a number
 * (`amount=2000` → 2000; a whole number where the hint is one: `12.5` is refused where it is 0), `true`/`false` where it holds a boolean, nested by the hint's own
 * nesting; text (or null) everywhere else. A value that cannot be read as its type is refused.
 * A mapping or list in which nothing changes type is given back as it is (no copy): most form
 * fields stay text, and a create then allocates nothing here. Neither `value` nor the result is
 * changed afterwards by any caller.
 */
export function typeForm(value: unknown, hint: unknown, param: string): unknown {
  if (value === null || value === undefined) return value;
  if (typeof value === 'string') {
    if (typeof hint === 'number') {
      // Decimal digits only (Number() would also read `0x10`, `1e3`, ` 5`, `Infinity`); whole ones where the hint is.
      const integer = Number.isInteger(hint);
      const n = (integer ? INTEGER : DECIMAL).test(value) ? Number(value) : NaN;
      if (integer ? !Number.isSafeInteger(n) : !Number.isFinite(n))
        throw new BadInput(`Invalid ${integer ? 'integer' : 'number'}: ${value}`, param);
      return n;
    }
    if (typeof hint === 'boolean') {
      if (value === 'true' || value === 'false') return value === 'true';
      throw new BadInput(`Invalid boolean: ${value}`, param);
    }
    return value;
  }
  if (Array.isArray(value)) {
    const itemHint = Array.isArray(hint) ? hint[0] : undefined;
    let out: unknown[] | undefined;
    for (let i = 0; i < value.length; i++) {
      const item: unknown = value[i];
      const typed = typeForm(item, itemHint, `${param}[${i}]`);
      if (typed !== item) (out ??= value.slice())[i] = typed;
    }
    return out ?? value;
  }
  if (typeof value === 'object') {
    const hints = hint !== null && typeof hint === 'object' && !Array.isArray(hint) ? (hint as Obj) : undefined;
    let out: Obj | undefined;
    for (const key of Object.keys(value)) {
      const item = (value as Obj)[key];
      const hinted = hints !== undefined && Object.hasOwn(hints, key);
      const typed =
        typeof item === 'string' && !hinted
          ? item // text without a hint stays text
          : typeForm(item, hinted ? hints[key] : undefined, paramOf(param, key));
      if (typed !== item) (out ??= { ...(value as Obj) })[key] = typed;
    }
    return out ?? value;
  }
  return value;
}

const paramOf = (param: string, key: string): string => (param === '' ? key : `${param}[${key}]`);
