import { ERROR_KINDS, type AuthSource, type ErrorKind, type ErrorTemplateConfig } from './types.js';

type Obj = Record<string, unknown>;

/** The default base path: endpoints answer under `/mock`. */
export const DEFAULT_BASE_PATH = '/mock';

/** `server.basePath` as the server compares it: without a trailing `/`, so `/` becomes `` (the root). */
export function buildBasePath(raw: unknown): string {
  const text = typeof raw === 'string' ? raw : DEFAULT_BASE_PATH;
  let end = text.length;
  while (end > 0 && text.charCodeAt(end - 1) === 0x2f /* / */) end--;
  return text.slice(0, end);
}

/** `auth.accept` as a list of sources; undefined when absent (the default list). */
export function buildAuthAccept(rawAuth: unknown): AuthSource[] | undefined {
  const accept = rawAuth !== null && typeof rawAuth === 'object' ? (rawAuth as Obj).accept : undefined;
  if (!Array.isArray(accept)) return undefined;
  return accept.map((item): AuthSource => {
    if (item === 'x-api-key' || item === 'bearer' || item === 'basic') return { kind: item };
    const [kind, name] = Object.entries(item as Obj)[0] as [string, string];
    return { kind: kind as 'header' | 'query' | 'scheme' | 'cookie', name };
  });
}

/** One `errors.<kind>` entry, defaults left absent. */
export function buildErrorTemplate(raw: unknown): ErrorTemplateConfig {
  const o = raw !== null && typeof raw === 'object' ? (raw as Obj) : {};
  const template: ErrorTemplateConfig = {
    headers: Object.fromEntries(
      Object.entries(o.headers !== null && typeof o.headers === 'object' ? (o.headers as Obj) : {}),
    ) as Record<string, string>,
    hasBody: Object.prototype.hasOwnProperty.call(o, 'body'),
  };
  if (typeof o.status === 'number') template.status = o.status;
  if (template.hasBody) template.body = o.body;
  return template;
}

/** `errors:` as a map of kind to template. */
export function buildErrors(raw: unknown): Partial<Record<ErrorKind, ErrorTemplateConfig>> {
  const errors: Partial<Record<ErrorKind, ErrorTemplateConfig>> = {};
  if (raw === null || typeof raw !== 'object') return errors;
  for (const kind of ERROR_KINDS) {
    if (Object.prototype.hasOwnProperty.call(raw, kind)) errors[kind] = buildErrorTemplate((raw as Obj)[kind]);
  }
  return errors;
}

/** `endpoints[].errors.simulatedFailure`, when set. */
export function buildEndpointFailure(raw: unknown): ErrorTemplateConfig | undefined {
  if (raw === null || typeof raw !== 'object' || !Object.prototype.hasOwnProperty.call(raw, 'simulatedFailure'))
    return undefined;
  return buildErrorTemplate((raw as Obj).simulatedFailure);
}
