import type { ConfigIssue } from './types.js';
import { formatFieldPath, type FieldPath } from './field-path.js';
import type { Locator, Position } from './locate.js';
import { isSecretConfigPath } from './secret-paths.js';

/** Collects the problems of one config, each once, with its position. */
export interface IssueList {
  readonly issues: ConfigIssue[];
  readonly locator: Locator;
  /** Adds `<field> <message>` at `position` (default: where the value at `path` starts). */
  report(path: FieldPath, message: string, position?: Position): void;
  /** Whether a problem was already reported for exactly this field. */
  has(path: FieldPath): boolean;
}

export function createIssueList(file: string, locator: Locator): IssueList {
  const issues: ConfigIssue[] = [];
  const reported = new Set<string>();
  return {
    issues,
    locator,
    report(path, message, position = locator.valueAt(path)) {
      const field = formatFieldPath(path);
      // The last guard for a secret's path: its text as written never reaches a message.
      if (isSecretConfigPath(path)) message = withoutSource(message, locator.plainSourceAt(path));
      reported.add(field);
      issues.push({
        file,
        line: position.line,
        column: position.column,
        path: field,
        message: field === '' ? `the config ${message}` : `${field} ${message}`,
      });
    },
    // asked for every field of every endpoint: answer the usual case (nothing reported) without formatting the path
    has: (path) => reported.size > 0 && reported.has(formatFieldPath(path)),
  };
}

/** `message` with `source` (a secret's text as written) replaced wherever it appears. */
function withoutSource(message: string, source: string | undefined): string {
  return source === undefined || source.length < 4 ? message : message.split(source).join('<redacted>');
}

/** One issue about the file as a whole (cannot be read, too large…), at line 0, column 0. */
export function fileIssue(file: string, message: string, position: Position = { line: 0, column: 0 }): ConfigIssue {
  return { file, line: position.line, column: position.column, path: '', message };
}

const MAX_SHOWN_STRING = 60;

/** A value as a message shows it after "got": `1.5`, `"fast"`, `true`, `a list`, `an empty value`. */
export function describeValue(value: unknown): string {
  if (value === null || value === undefined) return 'an empty value';
  if (typeof value === 'string') {
    const shown = value.length > MAX_SHOWN_STRING ? `${value.slice(0, MAX_SHOWN_STRING)}…` : value;
    return JSON.stringify(shown);
  }
  if (typeof value === 'number') {
    if (Number.isNaN(value)) return '.nan (not a number)';
    if (!Number.isFinite(value)) return value > 0 ? '.inf' : '-.inf';
    return String(value);
  }
  if (typeof value === 'boolean') return String(value);
  if (Array.isArray(value)) return 'a list';
  if (typeof value === 'object') return 'a mapping';
  return `a ${typeof value}`;
}
