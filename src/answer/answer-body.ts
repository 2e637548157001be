/**
 * An answer's body as it is written: bytes, or UTF-8 text. Node writes a text body in the same
 * write as the response head (`OutgoingMessage._send` joins the two strings), where bytes go as a
 * second buffer of a `writev`; for a body of a few KiB the single write is the cheaper one (about
 * 1 µs a request, 5 % of a small answer on loopback). A rendered body is text already, so it is
 * sent as it is instead of being copied into bytes first. Bodies over {@link TEXT_BODY_MAX} and
 * bytes that are not exactly UTF-8 (an image, a file with invalid sequences) stay bytes, which Node
 * sends without copying.
 */
export type AnswerBody = Buffer | string;

/** The largest fixed body kept as text (in bytes). */
export const TEXT_BODY_MAX = 8 * 1024;

/** The body's length in bytes, for content-length. */
export function bodyLength(body: AnswerBody): number {
  return typeof body === 'string' ? Buffer.byteLength(body, 'utf8') : body.length;
}

/** The body as bytes (a fault that cuts it at a byte count needs them). */
export function bodyBytes(body: AnswerBody): Buffer {
  return typeof body === 'string' ? Buffer.from(body, 'utf8') : body;
}

/**
 * How a fixed body is kept: as text when it is at most {@link TEXT_BODY_MAX} bytes and they are
 * exactly that text's UTF-8 (text given is), else as bytes.
 */
export function writtenForm(body: AnswerBody): AnswerBody {
  if (typeof body === 'string')
    return Buffer.byteLength(body, 'utf8') > TEXT_BODY_MAX ? Buffer.from(body, 'utf8') : body;
  const bytes = body;
  if (bytes.length > TEXT_BODY_MAX) return bytes;
  const text = bytes.toString('utf8');
  // Invalid sequences decode to U+FFFD, which encodes to other bytes: such a body stays bytes.
  return Buffer.byteLength(text, 'utf8') === bytes.length && Buffer.from(text, 'utf8').equals(bytes) ? text : bytes;
}

/** Whether two bodies are the same bytes. */
export function sameBody(a: AnswerBody, b: AnswerBody): boolean {
  if (typeof a === 'string' && typeof b === 'string') return a === b;
  return bodyBytes(a).equals(bodyBytes(b));
}
