import type { Logger } from '../../src/logger.js';
import { createStoreGate, type StoreGateHandle } from '../../src/pipeline/store-gate.js';

/** A logger that keeps its lines, each prefixed with its level (`warn …`). */
export function captureLogger(): Logger & { lines: string[] } {
  const lines: string[] = [];
  return {
    lines,
    info: (m) => lines.push(`info ${m}`),
    warn: (m) => lines.push(`warn ${m}`),
    error: (m) => lines.push(`error ${m}`),
  };
}

let projects = 0;

/** `n` store gates of one fresh project on the Redis at `url`, as `n` servers would hold. */
export async function storeGates(
  url: string,
  n: number,
  logger: Logger = captureLogger(),
  commandTimeoutMs?: number,
): Promise<{ project: string; handles: StoreGateHandle[]; close(): Promise<void> }> {
  const project = `p${++projects}-${process.pid}`;
  const handles = await Promise.all(
    Array.from({ length: n }, () => createStoreGate({ url, project, logger, commandTimeoutMs })),
  );
  return { project, handles, close: async () => void (await Promise.all(handles.map((h) => h.close()))) };
}
