import type { Json, JsonObject } from '../description/json-pointer.js';
import type { Description } from '../description/description.js';
import { locate } from '../description/pointers.js';
import { loadAjv, schemaSet, type SchemaCheck } from './schemas.js';

/**
 * The check `mockapi import` holds each generated answer to: the schema it was made from, read as
 * request validation reads a response's (adjust.ts; writeOnly properties not required). Schemas
 * are compiled once per canonical pointer; one that cannot be compiled holds nothing back.
 */

let imports = 0;

/** A check of values against the schemas of `doc` (of OpenAPI `version`), at pointers that may cross `$ref`s. */
export async function createAnswerCheck(
  doc: JsonObject,
  version: string,
): Promise<(pointer: string, value: Json) => boolean> {
  await loadAjv();
  // Not kept between imports: a description read for import is not the one a server validates with.
  const description: Description = {
    doc,
    version: version.startsWith('3.1') ? '3.1' : '3.0',
    hash: `import:${++imports}`,
    operations: new Map(),
    byRoute: new Map(),
  };
  const set = schemaSet(description);
  const compiled = new Map<string, SchemaCheck | undefined>();
  return (pointer, value) => {
    const canonical = locate(doc, pointer)?.pointer;
    if (canonical === undefined) return true;
    if (!compiled.has(canonical)) {
      let check: SchemaCheck | undefined;
      try {
        check = set.compileResponseAt(canonical);
      } catch {
        check = undefined; // nothing to hold the value to (mockapi validate names the schema)
      }
      compiled.set(canonical, check);
    }
    const check = compiled.get(canonical);
    return check === undefined || check(value);
  };
}
