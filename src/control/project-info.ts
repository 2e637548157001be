import { maskKey } from '../redact/mask-key.js';

export { maskKey };

/** `GET /__mockapi/project`: the project's name and its key, masked; the key itself only when asked. */
export interface ProjectInfo {
  project: string;
  /** The key masked: `…` and at most its last 4 characters (see maskKey). */
  maskedKey: string;
  /** Only with `?reveal=true`: the inspector's "Show" and "Copy" ask for it when pressed. */
  key?: string;
}

/**
 * The project info of a config. The key is left out unless `reveal`: the inspector page loads the
 * masked form, so the full key is never in the page until the user asks for it. The admin API's
 * safety rules (Host check, no CORS) keep other origins from reading either answer.
 */
export function projectInfo(config: { readonly project: string; readonly apiKey: string }, reveal: boolean): ProjectInfo {
  const info: ProjectInfo = { project: config.project, maskedKey: maskKey(config.apiKey) };
  if (reveal) info.key = config.apiKey;
  return info;
}
