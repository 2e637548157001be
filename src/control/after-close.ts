import { unreachable } from './control-error.js';

/**
 * The calls of a server's object (and the groups under it: `scenarios`, `clock`, `webhooks`,
 * `resources.<name>`…, and what a call hands back with calls of its own, such as a stub's
 * `remove`), refused once `closed()` says the server is closed: each rejects at once with the
 * error a call to a stopped server gets from `connectMockServer` (nothing answers at `url`), and
 * does nothing — no file is written, no stub added, no wait begun.
 */
export function refusedWhenClosed<T extends object>(calls: T, closed: () => boolean, url: string): T {
  const wrapped = new WeakMap<object, unknown>();
  const guard = <V>(value: V, self?: object): V => {
    if (typeof value === 'function') return guardCall(value as (...args: unknown[]) => unknown, self) as V;
    if (value === null || typeof value !== 'object') return value;
    let proxy = wrapped.get(value);
    if (proxy === undefined) {
      proxy = new Proxy(value, { get: (target, key) => guard(Reflect.get(target, key) as unknown, target) });
      wrapped.set(value, proxy);
    }
    return proxy as V;
  };
  const guardCall = (call: (...args: unknown[]) => unknown, self: object | undefined) => {
    let proxy = wrapped.get(call);
    if (proxy === undefined) {
      proxy = (...args: unknown[]): unknown => {
        if (closed()) return Promise.reject(unreachable(url));
        const result = call.apply(self, args);
        return result instanceof Promise
          ? result.then((value: unknown) => (hasCalls(value) ? guard(value) : value))
          : result;
      };
      wrapped.set(call, proxy);
    }
    return proxy;
  };
  return guard(calls);
}

/** An answer with calls of its own (a stub's handle), not plain data. */
function hasCalls(value: unknown): value is object {
  return (
    value !== null &&
    typeof value === 'object' &&
    !Array.isArray(value) &&
    Object.values(value).some((member) => typeof member === 'function')
  );
}
