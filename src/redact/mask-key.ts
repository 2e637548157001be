/** The most characters of a key a masked key shows, whatever the key's length. */
export const MASK_VISIBLE = 4;

/**
 * A key as it may be shown (the inspector's project view, a message): `…` and its last characters,
 * never more than 4 of them and never more than a quarter of the key, so that a short key keeps
 * most of itself hidden: `mk_9WbDq2vG0yq7Jc4TnR1sXe8ZkP3fLmA6` → `…LmA6`, `developer_abc` → `…abc`,
 * `abc` → `…`. Enough to tell keys apart; the length is not shown either.
 */
export function maskKey(key: string): string {
  const visible = Math.min(MASK_VISIBLE, Math.floor(key.length / 4));
  return `…${visible === 0 ? '' : key.slice(-visible)}`;
}
