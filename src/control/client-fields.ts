// Objects keyed by names a client chose (its header and query names), built without Maps: a view
// of a journal entry is built for every request a fleet or `--workers` shares.

/**
 * A field a client named (a header, a query parameter), own whatever its name: `__proto__` is
 * defined as a plain field rather than set (which would change the object's prototype).
 */
export function setField<T>(object: Record<string, T>, name: string, value: T): void {
  if (name === '__proto__')
    Object.defineProperty(object, name, { value, enumerable: true, writable: true, configurable: true });
  else object[name] = value;
}

/** The field `name` of `object` if it is its own (never one it inherits: `constructor`, `toString`). */
export function ownField<T>(object: Record<string, T>, name: string): T | undefined {
  return Object.hasOwn(object, name) ? object[name] : undefined;
}
