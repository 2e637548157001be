import type { FieldPath } from './field-path.js';

/** 1-based line and column; 0 and 0 when the config has no source text (a config object). */
export interface Position {
  line: number;
  column: number;
}

/** Maps field paths to places in the source, for messages. */
export interface Locator {
  /** Where the value at `path` starts, or its deepest existing ancestor when it is missing. */
  valueAt(path: FieldPath): Position;
  /** Where the key of the last segment of `path` is written (for unknown or misplaced fields). */
  keyAt(path: FieldPath): Position;
  /** The source text of the value at `path` when it is an unquoted scalar (`0123`, `yes`), else undefined. */
  plainSourceAt(path: FieldPath): string | undefined;
  /**
   * Where character `offset` (0-based) of the string at `path` is written in the source, through
   * quotes, escapes, folded lines and block-scalar indentation; where the value starts when that
   * cannot be worked out.
   */
  textAt(path: FieldPath, offset: number): Position;
}

export const NO_POSITION: Position = { line: 0, column: 0 };

/** For configs given as objects: there is nothing to point at. */
export const objectLocator: Locator = {
  valueAt: () => NO_POSITION,
  keyAt: () => NO_POSITION,
  plainSourceAt: () => undefined,
  textAt: () => NO_POSITION,
};
