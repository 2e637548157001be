/** How much config the readers take on: the bounds that keep a hostile file from costing time or memory. */

/**
 * Config files larger than this are refused before they are parsed. A config with 10,000
 * endpoints is about 1.5 MB; anything past 5 MiB is a mistake or an attack.
 */
export const MAX_CONFIG_BYTES = 5 * 1024 * 1024;
/** YAML aliases may expand to at most this many nodes' worth (yaml's `maxAliasCount`); beyond, an alias bomb. */
export const MAX_ALIAS_COUNT = 100;
/**
 * What aliases and merge keys may expand the document to, measured as JSON text (escapes aside;
 * even all escapes keep every body well under V8's longest string). `MAX_ALIAS_COUNT` bounds how
 * often an anchor is reused, not how big it is: 99 aliases of a 4 MB anchor passed it, made a
 * 400 MB response body and `serve` fail with "Invalid string length" while `validate` said valid.
 */
export const MAX_EXPANDED_SIZE = 10 * MAX_CONFIG_BYTES;
/**
 * Lines plus commas a config may hold. The YAML reader costs about 10 µs and 1.5 KB per value, so a
 * 5 MiB file of tiny values (`[1,1,1,…]`) would take 15 s and 3 GB to read; this bound keeps the
 * worst case near 2 s. 10,000 typical endpoints are about 100,000 lines. Large bodies belong in a
 * `bodyFile`, which is sent as bytes and never parsed.
 */
export const MAX_CONFIG_ITEMS = 250_000;
/** The file label of a config given as an object. */
export const OBJECT_LABEL = '<config object>';

/** Reported when the YAML reader runs out of stack (thousands of nested brackets). */
export const TOO_DEEP = 'the config is nested too deeply to be read';

/** Lines plus commas in `text`, counting no further than `limit + 1`. */
export function countItems(text: string, limit: number): number {
  let count = 0;
  for (const separator of ['\n', ',']) {
    for (let at = text.indexOf(separator); at !== -1 && count <= limit; at = text.indexOf(separator, at + 1)) count++;
  }
  return count;
}
