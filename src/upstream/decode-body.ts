// An upstream's body as record and verify keep it: decoded by its content-encoding, within a bound.
import { promisify } from 'node:util';
import { zlib } from '../lazy-builtins.js';
import { MAX_RECORDED_BODY } from '../record/exchange.js';

type Decoder = (body: Buffer, options: { maxOutputLength: number }) => Promise<Buffer>;
/** The decoders by content-encoding, made on the first compressed body (node:zlib loads then). */
let decoders: { readonly byEncoding: Record<string, Decoder>; readonly inflateRaw: Decoder } | undefined;
function decodersOf(): NonNullable<typeof decoders> {
  if (decoders !== undefined) return decoders;
  const { brotliDecompress, gunzip, inflate, inflateRaw } = zlib();
  const gzip: Decoder = promisify(gunzip);
  return (decoders = {
    byEncoding: { gzip, 'x-gzip': gzip, br: promisify(brotliDecompress), deflate: promisify(inflate) },
    inflateRaw: promisify(inflateRaw),
  });
}

/**
 * The body's bytes decoded by its content-encoding (gzip, deflate, br), at most `max` of them;
 * undefined when it cannot be decoded or decodes to more (a decompression bomb stops at the bound).
 * It runs off the event loop (zlib's thread pool), so a large or hostile body never blocks requests.
 */
export async function decodeBody(
  body: Buffer,
  encoding: string | undefined,
  max = MAX_RECORDED_BODY,
): Promise<Buffer | undefined> {
  const e = (encoding ?? '').trim().toLowerCase();
  if (e === '' || e === 'identity') return body.length > max ? undefined : body;
  const { byEncoding, inflateRaw } = decodersOf();
  const decode = Object.hasOwn(byEncoding, e) ? byEncoding[e] : undefined;
  if (decode === undefined) return undefined;
  try {
    return await decode(body, { maxOutputLength: max });
  } catch (err) {
    if (e !== 'deflate' || (err as NodeJS.ErrnoException).code === 'ERR_BUFFER_TOO_LARGE') return undefined;
    try {
      return await inflateRaw(body, { maxOutputLength: max });
    } catch {
      return undefined;
    }
  }
}
