import { LazyRequestContext } from '../answer/request-context.js';
import { exposing } from '../answer/server-headers.js';
import type { Exchange } from './exchange.js';

/** What the `${…}` of `server.headers` read beside the request. */
export interface ServerHeaderSources {
  /** The seed of the random values (the one given, or the one chosen at start). */
  seed(): number;
  /** Scenario states. */
  states(): Readonly<Record<string, string>>;
  /** The server's clock. */
  now(): number;
  /** Names this server's draws: two workers of `serve --workers` draw apart. */
  readonly key: string;
}

const NO_PARAMS = (): Record<string, string> => ({});
const NO_STATES: Readonly<Record<string, string>> = {};
const NO_HEADERS: readonly string[] = [];

/**
 * `server.headers` onto the headers every answer to a mock request carries (`x.extra`), made at the
 * front for every mock request (admin calls and health get none): the list made at load when no
 * value has an expression; else each value for this request, its random values the n-th of this
 * server's. Returns what it added. Without `sources`, expressions read seed 0 and no state.
 */
export function serverHeadersFront(sources: ServerHeaderSources | undefined): (x: Exchange) => readonly string[] {
  /** Mock requests whose `server.headers` were made: `request` of their expressions, the n of their draws. */
  let made = 0;
  return (x) => {
    const own = x.compiled.serverHeaders;
    if (own === undefined) return NO_HEADERS;
    const list =
      own.fixed ??
      own.render(
        new LazyRequestContext({
          url: x.req.url ?? '/',
          mockPath: x.mockPath,
          headers: x.req.headers,
          body: undefined,
          request: ++made,
          state: sources?.states() ?? NO_STATES,
          now: sources?.now() ?? Date.now(),
          readParams: NO_PARAMS,
          seed: sources?.seed() ?? 0,
          endpointKey: sources?.key ?? 'server.headers',
          seedBy: undefined,
        }),
      );
    // With CORS on, scripts of other origins may read them too.
    x.extra = x.extra.length === 0 ? list : exposing(x.extra, own.expose).concat(list);
    return list;
  };
}
