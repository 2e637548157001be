/**
 * Request bodies that are not JSON, read into values: `application/x-www-form-urlencoded` with
 * bracket notation (`metadata[order_id]=1&items[0][qty]=2&tags[]=a`) and `multipart/form-data`
 * (fields as text; a file part as its text). Values stay strings: the schema coerces them.
 */

type Obj = Record<string, unknown>;

/** Keys that would reach an object's prototype: kept as plain fields of a null-prototype object. */
function child(container: Obj | unknown[], key: string, next: string | undefined): Obj | unknown[] {
  const existing = (container as Obj)[key];
  if (existing !== null && typeof existing === 'object') return existing as Obj | unknown[];
  const made: Obj | unknown[] =
    next !== undefined && (next === '' || /^\d+$/.test(next)) ? [] : (Object.create(null) as Obj);
  setKey(container, key, made);
  return made;
}

function setKey(container: Obj | unknown[], key: string, value: unknown): void {
  if (Array.isArray(container)) {
    if (key === '') container.push(value);
    else if (/^\d+$/.test(key) && Number(key) < 10_000) container[Number(key)] = value;
    else container.push(value);
    return;
  }
  const before = container[key];
  if (before === undefined) container[key] = value;
  else
    container[key] =
      Array.isArray(before) && typeof value !== 'object'
        ? [...before, value]
        : typeof value !== 'object' && typeof before !== 'object'
          ? [before, value]
          : value;
}

/** `a[b][0][]` → `['a', 'b', '0', '']`; a name without brackets is one key. */
export function bracketKeys(name: string): string[] {
  const open = name.indexOf('[');
  if (open <= 0 || !name.endsWith(']')) return [name];
  const keys = [name.slice(0, open)];
  const rest = name.slice(open);
  const parts = /\[([^\]]*)\]/g;
  let consumed = 0;
  for (let m = parts.exec(rest); m !== null; m = parts.exec(rest)) {
    if (m.index !== consumed) return [name];
    keys.push(m[1] as string);
    consumed = m.index + m[0].length;
  }
  return consumed === rest.length ? keys : [name];
}

/** Puts `value` at the bracket path of `name` in `root`. */
export function assign(root: Obj, name: string, value: string): void {
  const keys = bracketKeys(name);
  let container: Obj | unknown[] = root;
  for (let i = 0; i < keys.length - 1; i++) container = child(container, keys[i] as string, keys[i + 1]);
  setKey(container, keys[keys.length - 1] as string, value);
}

function decodeForm(text: string): string {
  try {
    return decodeURIComponent(text.replace(/\+/g, ' '));
  } catch {
    return text;
  }
}

/** An `application/x-www-form-urlencoded` body as an object, bracket notation read as nesting. */
export function parseFormBody(text: string): Obj {
  const root = Object.create(null) as Obj;
  for (const pair of text.split('&')) {
    if (pair === '') continue;
    const eq = pair.indexOf('=');
    assign(root, decodeForm(eq === -1 ? pair : pair.slice(0, eq)), decodeForm(eq === -1 ? '' : pair.slice(eq + 1)));
  }
  return root;
}

/** Whether a content type is a form (`application/x-www-form-urlencoded`). */
export function isFormType(contentType: string | undefined): boolean {
  return contentType !== undefined && /^\s*application\/x-www-form-urlencoded\s*(;|$)/i.test(contentType);
}

/** A `multipart/form-data` body as an object of its parts (by name, bracket notation read as nesting); undefined when it cannot be read. */
export function parseMultipart(bytes: Buffer, contentType: string): Obj | undefined {
  const boundary = /;\s*boundary=(?:"([^"]+)"|([^;\s]+))/i.exec(contentType);
  const mark = boundary?.[1] ?? boundary?.[2];
  if (mark === undefined) return undefined;
  const text = bytes.toString('latin1');
  const delimiter = `--${mark}`;
  const root = Object.create(null) as Obj;
  const sections = text.split(delimiter);
  if (sections.length < 2) return undefined;
  for (const section of sections.slice(1)) {
    if (section.startsWith('--')) break;
    const headEnd = section.indexOf('\r\n\r\n');
    if (headEnd === -1) continue;
    const head = section.slice(0, headEnd);
    const name = /content-disposition:[^\r\n]*;\s*name="([^"]*)"/i.exec(head)?.[1];
    if (name === undefined) continue;
    const content = section.slice(headEnd + 4).replace(/\r\n$/, '');
    assign(root, Buffer.from(name, 'latin1').toString('utf8'), Buffer.from(content, 'latin1').toString('utf8'));
  }
  return root;
}
