/**
 * Headers that describe one connection, not the message (RFC 9110, section 7.6.1, and the older names
 * proxies still send): a proxy never forwards them, and no configured header may set them.
 */
export const HOP_BY_HOP_HEADERS: readonly string[] = [
  'connection',
  'keep-alive',
  'proxy-connection',
  'te',
  'trailer',
  'transfer-encoding',
  'upgrade',
];

/** The hop-by-hop headers and `content-length`: the message's framing, which every answer sets for itself. */
export const FRAMING_HEADERS: readonly string[] = [...HOP_BY_HOP_HEADERS, 'content-length'];
