import { startServe, tempDir, writeConfig, type ServeProcess } from './cli.js';

export const KEY = 'mk_dynamicTest000000000000000000001';

/** A served config and a way to call it with the key. */
export interface DynamicServer {
  proc: ServeProcess;
  file: string;
  call(
    path: string,
    init?: RequestInit,
  ): Promise<{ status: number; text: string; json: () => unknown; headers: Headers }>;
}

/** Writes `yaml` (the key and `endpoints:` are the caller's) into a fresh folder and serves it on port 0. */
export async function serveDynamic(yaml: string, args: string[] = []): Promise<DynamicServer> {
  const dir = await tempDir('mockapi-dynamic-');
  const file = await writeConfig(dir, yaml);
  const proc = await startServe(['-c', file, ...args]);
  return {
    proc,
    file,
    async call(path, init = {}) {
      const res = await fetch(`${proc.mock}${path}`, {
        ...init,
        headers: { 'x-api-key': KEY, ...(init.headers as Record<string, string> | undefined) },
      });
      const text = await res.text();
      return { status: res.status, text, json: () => JSON.parse(text) as unknown, headers: res.headers };
    },
  };
}
