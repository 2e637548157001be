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
  /** HASH `<endpoint>\0<answer>` → requests that answer answered, every host's. */
  answers: string;
  /** STRING: the requests journaled, every host's (a session's line of `GET /__mockapi/sessions`). */
  requests: string;
  /** HASH writer → its mark: the number of the last entry of its that the stream took (a write sent again is not added twice). */
  marks: string;
  /** HASH stub id → its record (JSON); `stubLeft` HASH id → answers left; `stubHits` HASH id → requests it answered, every host's; `stubNames` HASH name → id; `stubSeq` the order. */
  stubs: string;
  stubLeft: string;
  stubHits: string;
  stubNames: string;
  stubSeq: string;
  /** HASH scenario → state. */
  scenarios: string;
  /** STRING: the scope's epoch, gone when Redis lost its data (generation.ts). */
  epoch: string;
  /** STRING: the virtual clock, JSON `{offset, start}`. */
  clock: string;
  /** STRING: the project's CA (its key file: the private key, then the certificate). */
  ca: string;
  /** The pub/sub channel of the fleet's changes and their acknowledgements. */
  channel: string;
  /** HASH session id → its record (JSON: created, the digest of its key); ZSET id → when a host last saw it used (ms). */
  sessions: string;
  sessionSeen: string;
  /** Prefix of each host's nudge stream: an entry there wakes the host's blocking read of the journals (a stream joined). */
  nudge: string;
}

/**
 * The fleet's keys of `project`; with `session`, a named session's own (its journal, stubs,
 * scenario states, clock) under `{mockapi:<project>}:fleet:s:<id>:` — the project's slot still —
 * beside the project-wide ones (hosts, CA, channel, the sessions' registry), which stay the project's.
 */
export function fleetKeys(project: string, session?: string): FleetKeys {
  const root = `{mockapi:${project}}:fleet`;
  const tag = session === undefined || session === '' ? root : `${root}:s:${session}`;
  return {
    hosts: `${root}:hosts`,
    journal: `${tag}:journal`,
    counts: `${tag}:counts`,
    answers: `${tag}:answers`,
    requests: `${tag}:requests`,
    marks: `${tag}:marks`,
    stubs: `${tag}:stubs`,
    stubLeft: `${tag}:stub-left`,
    stubHits: `${tag}:stub-hits`,
    stubNames: `${tag}:stub-names`,
    stubSeq: `${tag}:stub-seq`,
    scenarios: `${tag}:scenarios`,
    epoch: `${tag}:epoch`,
    clock: `${tag}:clock`,
    ca: `${root}:ca`,
    channel: `mockapi:${project}:fleet`,
    sessions: `${root}:sessions`,
    sessionSeen: `${root}:session-seen`,
    nudge: `${root}:nudge:`,
  };
}
