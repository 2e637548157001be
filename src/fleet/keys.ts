/**
 * The fleet's keys in Redis, beside the limits' (`{mockapi:<project>}:window`…) and the resources'
 * (`{mockapi:<project>}:res:*`): one hash tag per project, so every script's keys are in one slot.
 * The channel is not a key (pub/sub is not slotted).
 */
export interface FleetKeys {
  /** HASH host id → the host's registration (JSON). */
  hosts: string;
  /** STREAM of journal entries, ids `0-<n>`: one order for every host. */
  journal: string;
  /** HASH endpoint → requests, every host's. */
  counts: string;
  /** Prefix of each host's mark: the number of the last entry of its that the stream took (a write sent again is not added twice). */
  marks: string;
  /** HASH stub id → its record (JSON); `stubLeft` HASH id → answers left; `stubNames` HASH name → id; `stubSeq` the order. */
  stubs: string;
  stubLeft: string;
  stubNames: string;
  stubSeq: string;
  /** HASH scenario → state. */
  scenarios: string;
  /** STRING: the virtual clock, JSON `{offset, start}`. */
  clock: string;
  /** STRING: the project's CA (its key file: the private key, then the certificate). */
  ca: string;
  /** The pub/sub channel of the fleet's changes and their acknowledgements. */
  channel: string;
}

export function fleetKeys(project: string): FleetKeys {
  const tag = `{mockapi:${project}}:fleet`;
  return {
    hosts: `${tag}:hosts`,
    journal: `${tag}:journal`,
    counts: `${tag}:counts`,
    marks: `${tag}:mark:`,
    stubs: `${tag}:stubs`,
    stubLeft: `${tag}:stub-left`,
    stubNames: `${tag}:stub-names`,
    stubSeq: `${tag}:stub-seq`,
    scenarios: `${tag}:scenarios`,
    clock: `${tag}:clock`,
    ca: `${tag}:ca`,
    channel: `mockapi:${project}:fleet`,
  };
}
