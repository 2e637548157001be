/** Where a value sits in the config: keys and list indexes from the root, e.g. `['endpoints', 1, 'failRate']`. */
export type FieldPath = ReadonlyArray<string | number>;

const PLAIN_KEY = /^[A-Za-z_$][\w$-]*$/;

/** `endpoints[1].failRate`; keys that are not plain names are quoted: `headers["x y"]`. */
export function formatFieldPath(path: FieldPath): string {
  let out = '';
  for (const segment of path) {
    if (typeof segment === 'number') out += `[${segment}]`;
    else if (PLAIN_KEY.test(segment)) out += out === '' ? segment : `.${segment}`;
    else out += `[${JSON.stringify(segment)}]`;
  }
  return out;
}

/** Parses a JSON Pointer (`/endpoints/1/failRate`) against the data it points into, so list indexes become numbers. */
export function fieldPathFromPointer(pointer: string, root: unknown): FieldPath {
  if (pointer === '') return [];
  const path: Array<string | number> = [];
  let node: unknown = root;
  for (const raw of pointer.slice(1).split('/')) {
    const key = raw.replace(/~1/g, '/').replace(/~0/g, '~');
    if (Array.isArray(node)) {
      const index = Number(key);
      path.push(index);
      node = node[index];
    } else {
      path.push(key);
      node = node !== null && typeof node === 'object' ? (node as Record<string, unknown>)[key] : undefined;
    }
  }
  return path;
}
