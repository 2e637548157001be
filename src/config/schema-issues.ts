import { fieldPathFromPointer, formatFieldPath, type FieldPath } from './field-path.js';
import { describeValue, type IssueList } from './issues.js';
import type { SchemaError } from './schema-types.js';
import { misplacedField, suggestField } from '../suggest-field.js';
import { isSecretConfigPath } from './secret-paths.js';

/** Fields whose value must never appear in a message. */
const SECRET_FIELDS = new Set(['apiKey']);

const TYPE_WORDS: Record<string, string> = {
  object: 'a mapping',
  array: 'a list',
  string: 'a string',
  integer: 'a whole number',
  number: 'a number',
  boolean: 'true or false',
};

function expectedTypes(error: SchemaError): string[] {
  const type = error.params.type;
  const types = Array.isArray(type) ? (type as string[]) : [String(type)];
  return types.filter((t) => t !== 'null'); // `null` is accepted for optional sections, not worth mentioning
}

/** What a schema node says about its errors (the `errorMessage` annotation shared with editors). */
function schemaMessage(schema: unknown): string | undefined {
  const message = (schema as { errorMessage?: unknown } | undefined)?.errorMessage;
  return typeof message === 'string' ? message : undefined;
}

/** Whether `text` would pass the schema's pattern, were it a string. */
function matchesPattern(schema: Record<string, unknown> | undefined, text: string): boolean {
  const pattern = schema?.pattern;
  if (typeof pattern !== 'string') return true;
  try {
    return new RegExp(pattern, 'u').test(text);
  } catch {
    return false;
  }
}

/**
 * `, got …`, with a hint when an unquoted YAML value was read as a number or boolean where text
 * was expected (and would be valid as text), or when quotes hide a number.
 */
function got(
  issues: IssueList,
  path: FieldPath,
  value: unknown,
  expected: string[],
  schema?: Record<string, unknown>,
): string {
  // A secret is never echoed, whatever its type; what YAML made of it is told, not the value.
  if (isSecretConfigPath(path))
    return typeof value === 'number' || typeof value === 'boolean' ? `, got a ${typeof value} (put it in quotes)` : '';
  const shown = describeValue(value);
  const onlyString = expected.length === 1 && expected[0] === 'string';
  if (onlyString && (typeof value === 'number' || typeof value === 'boolean')) {
    const source = issues.locator.plainSourceAt(path);
    if (source !== undefined && matchesPattern(schema, source)) {
      return source === shown
        ? `, got ${shown} (a ${typeof value}); put it in quotes to make it text`
        : `, got ${source}, which YAML reads as the ${typeof value} ${shown}; put it in quotes`;
    }
  }
  if (
    typeof value === 'string' &&
    (expected.includes('integer') || expected.includes('number') || expected.includes('boolean'))
  ) {
    const trimmed = value.trim();
    if (trimmed !== '' && (/^(true|false)$/.test(trimmed) || !Number.isNaN(Number(trimmed)))) {
      return `, got ${shown} (a string); remove the quotes`;
    }
  }
  return `, got ${shown}`;
}

/**
 * The values a field takes, when the schema lists them: its `enum`, or the string `examples` of a
 * field whose pattern is a fixed list of words (method, fault kind), each checked against the pattern.
 */
function allowedValues(schema: Record<string, unknown> | undefined): string[] {
  if (schema === undefined) return [];
  if (Array.isArray(schema.enum)) return schema.enum.filter((v): v is string => typeof v === 'string');
  // Only a pattern that is a list of alternatives (`^(GET|POST|…)$`) is a fixed list of words.
  if (typeof schema.pattern !== 'string' || !/^\^\(.*\|.*\)\$$/.test(schema.pattern)) return [];
  const examples = Array.isArray(schema.examples)
    ? schema.examples.filter((v): v is string => typeof v === 'string')
    : [];
  return examples.filter((v) => matchesPattern(schema, v));
}

/** `; did you mean \`GET\`?` when a text value is a near miss of one of the field's values (`GTE`), else ''. */
function meantValue(value: unknown, schema: Record<string, unknown> | undefined): string {
  if (typeof value !== 'string' || value === '') return '';
  const allowed = allowedValues(schema);
  if (allowed.length === 0 || allowed.includes(value)) return '';
  const hint = suggestField(value, allowed);
  return hint === undefined ? '' : `; did you mean \`${hint}\`?`;
}

function apiKeyProblem(key: unknown): string {
  if (key === null || key === '') return 'must not be empty';
  if (typeof key !== 'string') return 'must be a string (put it in quotes)';
  if (/\s/.test(key)) return 'must not contain spaces or other whitespace';
  if (key.includes(':')) {
    return 'must not contain `:` (clients may send the key as the Basic-auth username, which ends at the first `:`)';
  }
  return 'must contain only printable ASCII characters';
}

function rangeMessage(error: SchemaError): string {
  const schema = error.parentSchema ?? {};
  const min = schema.minimum;
  const max = schema.maximum;
  if (typeof min === 'number' && typeof max === 'number') return `must be between ${min} and ${max}`;
  if (typeof min === 'number') return `must be at least ${min}`;
  return `must be at most ${String(max)}`;
}

/** Fields known at a level: from the schema that refused the unknown one. */
function knownFields(error: SchemaError): string[] {
  const properties = error.parentSchema?.properties;
  if (properties === null || typeof properties !== 'object') return [];
  return Object.keys(properties).filter((name) => name !== '$schema');
}

function unknownField(issues: IssueList, parent: FieldPath, name: string, error: SchemaError): void {
  const path = [...parent, name];
  const where = issues.locator.keyAt(path);
  const generic = formatFieldPath(parent).replace(/\[\d+\]/g, '[]');
  const known = knownFields(error);
  const belongs = misplacedField(generic, name);
  const suggestion = suggestField(name, known);
  let message: string;
  if (/^[[{]/.test(name) && where.line > 0) {
    message = 'is a list or mapping used as a key; keys must be plain names';
  } else if (suggestion !== undefined) message = `is not a known field; did you mean \`${suggestion}\`?`;
  else if (belongs !== undefined) message = `is not a known field here; it belongs in ${belongs}`;
  else message = `is not a known field; expected one of ${known.join(', ')}`;
  issues.report(path, message, where);
}

/**
 * Turns the generated validator's errors into issues: one per field, in words a user of the config
 * understands, at the line and column of the offending value (or key, for an unknown field; or the
 * parent mapping, for a missing one).
 */
export function reportSchemaErrors(errors: readonly SchemaError[], data: unknown, issues: IssueList): void {
  const done = new Set<string>();
  for (const error of errors) {
    if (error.propertyName !== undefined) continue; // inner error of `propertyNames`; the outer one is reported
    const path = fieldPathFromPointer(error.instancePath, data);
    const param = error.params.additionalProperty ?? error.params.missingProperty ?? error.params.propertyName;
    const key = `${error.instancePath}\u0000${typeof param === 'string' ? param : ''}`;
    if (done.has(key)) continue; // e.g. a maximum error after the type error of the same value
    done.add(key);
    const value = error.data;
    const field = formatFieldPath(path);

    switch (error.keyword) {
      case 'additionalProperties':
        unknownField(issues, path, String(param), error);
        break;
      case 'required':
        issues.report([...path, String(param)], 'is required', issues.locator.valueAt(path));
        break;
      case 'propertyNames': {
        const name = String(param);
        const message = schemaMessage(error.schema) ?? 'is not an allowed name';
        issues.report([...path, name], message, issues.locator.keyAt([...path, name]));
        break;
      }
      case 'type': {
        const expected = expectedTypes(error);
        if (SECRET_FIELDS.has(field)) {
          issues.report(path, apiKeyProblem(value));
          break;
        }
        const words =
          schemaMessage(error.parentSchema) ?? `must be ${expected.map((t) => TYPE_WORDS[t] ?? t).join(' or ')}`;
        issues.report(path, words + got(issues, path, value, expected, error.parentSchema));
        break;
      }
      case 'pattern': {
        const message = SECRET_FIELDS.has(field)
          ? apiKeyProblem(value)
          : (schemaMessage(error.parentSchema) ?? `must match ${String(error.params.pattern)}`);
        const hint = isSecretConfigPath(path) ? '' : meantValue(value, error.parentSchema);
        issues.report(path, message + got(issues, path, value, ['string']) + hint);
        break;
      }
      case 'enum': {
        const allowed = (error.parentSchema?.enum as unknown[] | undefined) ?? [];
        const message = schemaMessage(error.parentSchema) ?? `must be one of ${allowed.map(String).join(', ')}`;
        issues.report(
          path,
          message +
            got(issues, path, value, []) +
            (isSecretConfigPath(path) ? '' : meantValue(value, error.parentSchema)),
        );
        break;
      }
      case 'minimum':
      case 'maximum':
        issues.report(path, rangeMessage(error) + got(issues, path, value, []));
        break;
      case 'not': {
        const names = (error.schema as { required?: unknown } | undefined)?.required;
        const last = Array.isArray(names) ? String(names[names.length - 1]) : undefined;
        const where = last === undefined ? undefined : issues.locator.keyAt([...path, last]);
        issues.report(path, schemaMessage(error.parentSchema) ?? 'is not allowed', where);
        break;
      }
      default:
        issues.report(
          path,
          `${String((error as { message?: unknown }).message ?? 'is not valid')}${got(issues, path, value, [])}`,
        );
    }
  }
}
