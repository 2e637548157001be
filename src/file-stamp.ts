import { stat } from 'node:fs/promises';

/**
 * The size, modification time and inode of `file`: what tells that a file read before has changed
 * without reading it again (the OpenAPI description of `openapi.spec`); '' when it cannot be read.
 */
export async function fileStamp(file: string): Promise<string> {
  const info = await stat(file).catch(() => undefined);
  return info === undefined ? '' : `${info.size}:${info.mtimeMs}:${info.ino}`;
}
