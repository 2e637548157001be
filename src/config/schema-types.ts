/** One failed check of the JSON Schema, as reported by the generated (ajv standalone) validator. */
export interface SchemaError {
  /** JSON Pointer to the offending value, e.g. `/endpoints/1/failRate`. */
  instancePath: string;
  schemaPath: string;
  keyword: string;
  params: Record<string, unknown>;
  /** Set on errors from a `propertyNames` subschema: the offending key. */
  propertyName?: string;
  /** The value of the failed keyword (the validator is compiled with `verbose`). */
  schema?: unknown;
  /** The schema object holding the failed keyword. */
  parentSchema?: Record<string, unknown>;
  data?: unknown;
}

/** The generated validator: returns whether `data` conforms; `errors` lists every problem otherwise. */
export interface SchemaValidator {
  (data: unknown): boolean;
  errors?: SchemaError[] | null;
}
