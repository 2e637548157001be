/** `GET /__mockapi/project`: the project's name and its key, masked; the key itself only when asked. */
export interface ProjectInfo {
  project: string;
  /** The key with all but its first and last few characters hidden: enough to tell keys apart. */
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

/**
 * `mk_9WbDq2vG0yq7Jc4TnR1sXe8ZkP3fLmA6` → `mk_9W…mA6`. Keys shorter than 12 characters show only
 * their length: a few visible characters would be too much of them.
 */
export function maskKey(key: string): string {
  if (key.length < 12) return '•'.repeat(key.length);
  const prefix = /^[a-z]+_/i.exec(key)?.[0] ?? '';
  return `${key.slice(0, prefix.length + 2)}…${key.slice(-3)}`;
}
