import { maskKey } from '../redact/mask-key.js';
import type { AuthSource } from '../config/types.js';
import { DEFAULT_ACCEPT, sourceLabel } from '../pipeline/auth-accept.js';

export { maskKey };

/** `GET /__mockapi/project`: the project's name and its key, masked; the key itself only when asked. */
export interface ProjectInfo {
  project: string;
  /** The key masked: `…` and at most its last 4 characters (see maskKey). */
  maskedKey: string;
  /** Only with `?reveal=true`: the inspector's "Show" and "Copy" ask for it when pressed. */
  key?: string;
  /** `server.basePath` as the page shows it: `/mock`, `/v1`, or `/` for the root. */
  basePath?: string;
  /** The first place `auth.accept` reads a key from (the page's example request sends it there). */
  credential?: { via: string; name?: string };
  /** Every place `auth.accept` reads a key from, in order of precedence (where the trace says a missing key was looked for). */
  accept?: Array<{ via: string; name?: string }>;
}

/**
 * The project info of a config. The key is left out unless `reveal`: the inspector page loads the
 * masked form, so the full key is never in the page until the user asks for it. The admin API's
 * safety rules (Host check, no CORS) keep other origins from reading either answer.
 */
export function projectInfo(
  config: {
    readonly project: string;
    readonly apiKey: string;
    readonly server?: { readonly basePath?: string | undefined };
    readonly authAccept?: readonly AuthSource[];
  },
  reveal: boolean,
): ProjectInfo {
  const info: ProjectInfo = { project: config.project, maskedKey: maskKey(config.apiKey) };
  if (config.server !== undefined) {
    const basePath = config.server.basePath ?? '/mock';
    info.basePath = basePath === '' ? '/' : basePath;
    const accept = config.authAccept ?? DEFAULT_ACCEPT;
    info.credential = sourceLabel(accept[0] as AuthSource);
    info.accept = accept.map(sourceLabel);
  }
  if (reveal) info.key = config.apiKey;
  return info;
}
