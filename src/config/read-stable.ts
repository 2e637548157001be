import { constants } from 'node:fs';
import { open, type FileHandle } from 'node:fs/promises';

/**
 * A file's bytes as one finished write left them. A save in progress (`fs.writeFile` truncates, then
 * writes; a large write fills the file while a reader reads it) can be read half-written, and a
 * half-written config is often a valid one — its first lines, the key of the next save and none of
 * its endpoints — that hot reload would then serve as "the last good one". The size and the
 * modification time are read before and after the bytes: when they moved, or the bytes are not the
 * size the file says, the file is read again a little later (at most `tries` times, then the last
 * reading is taken: the watcher starts another reload for a save still going on).
 */
export async function readStable(
  file: string,
  options: { tries?: number; waitMs?: number; openFile?: (file: string) => Promise<FileHandle> } = {},
): Promise<Buffer> {
  const tries = options.tries ?? 8;
  const waitMs = options.waitMs ?? 25;
  // Non-blocking: a FIFO put where the file was never blocks the read (the caller refuses it first).
  const openFile = options.openFile ?? ((name: string) => open(name, constants.O_RDONLY | constants.O_NONBLOCK));
  for (let attempt = 1; ; attempt++) {
    const handle = await openFile(file);
    let bytes: Buffer;
    let settled: boolean;
    try {
      const before = await handle.stat({ bigint: true });
      bytes = await handle.readFile();
      const after = await handle.stat({ bigint: true });
      settled = before.size === after.size && before.mtimeNs === after.mtimeNs && BigInt(bytes.length) === after.size;
    } finally {
      await handle.close();
    }
    if (settled || attempt >= tries) return bytes;
    await new Promise((done) => setTimeout(done, waitMs));
  }
}
