/** Milliseconds since the epoch; injected so limits and quota can be tested with a fake clock. */
export type Clock = () => number;

export const systemClock: Clock = () => Date.now();
