import { connectMockServer } from '../../connect.js';
import { ControlError } from '../../control/control-error.js';
import type { JournalEntry } from '../../control/journal-entry.js';
import { EXIT_FAILURE, EXIT_OK, type CommandIO } from './io.js';
import { newestServer } from './running-server.js';

export interface RequestsOptions {
  config: string;
  follow?: boolean;
  json?: boolean;
  adminToken?: string;
  /** `--violations`: only requests that broke the OpenAPI description, each violation on a line of its own. */
  violations?: boolean;
  /** `--futile`: only requests noted as a futile retry (sent again after a spent budget refused them). */
  futile?: boolean;
  /** `--session <id>`: the journal of that session of the server (its own entries only). */
  session?: string;
}

/**
 * `mockapi requests`: prints the journal of the running server of a config (found in the registry
 * under `.mockapi/servers/`; the newest when several run), one line per request, oldest first.
 * `--follow` then prints each new request as it arrives (the server's event stream) until the
 * server stops or the command is interrupted; `--json` prints each entry as one JSON line.
 */
export async function runRequests(opts: RequestsOptions, io: CommandIO): Promise<number> {
  const server = await newestServer(
    opts.config,
    io,
    (count, newest) => `${count} servers of ${opts.config} run; showing ${newest} (the newest)`,
  );
  if (server === undefined) return EXIT_FAILURE;
  const { url } = server;
  const token = opts.adminToken ?? process.env.MOCKAPI_ADMIN_TOKEN;
  const print = (entry: JournalEntry) => {
    if (opts.violations === true && (entry.violations?.length ?? 0) === 0) return;
    if (opts.futile === true && !entry.notes.some((note) => note.includes('futile retry ('))) return;
    io.out(
      opts.json ? JSON.stringify(entry) : opts.violations === true ? formatWithViolations(entry) : formatEntry(entry),
    );
  };

  const missing = opts.session === undefined ? undefined : await missingSession(url, token, opts.session);
  if (missing !== undefined) {
    io.err(missing);
    return EXIT_FAILURE;
  }
  // Following: subscribe first, then list, so no request falls between the two.
  const stream = opts.follow ? await openEvents(url, token, opts.session).catch((err: Error) => err) : undefined;
  if (stream instanceof Error) return failed(io, stream);
  // The ids listed: a streamed entry among them is not printed twice. Not "ids up to the last one
  // listed": with `serve --workers`, another worker's entry may reach the stream after a newer one.
  const listedIds = new Set<number>();
  const buffered: JournalEntry[] = [];
  let listed = false;
  const onEntry = (entry: JournalEntry) => {
    if (!listed) return void buffered.push(entry);
    if (!listedIds.has(entry.id)) print(entry);
  };
  const following = stream === undefined ? undefined : readEvents(stream, onEntry);
  try {
    const filter = {
      ...(opts.violations === true ? { violations: true } : {}),
      ...(opts.futile === true ? { futile: true } : {}),
    };
    for (const entry of await connectMockServer(url, {
      adminToken: token,
      ...(opts.session === undefined ? {} : { session: opts.session }),
    }).requests(Object.keys(filter).length === 0 ? undefined : filter)) {
      print(entry);
      listedIds.add(entry.id);
    }
  } catch (err) {
    await stream?.cancel().catch(() => {});
    return failed(io, err as Error);
  }
  listed = true;
  buffered.forEach(onEntry);
  if (following === undefined) return EXIT_OK;
  if ((await following) === 'dropped') {
    io.err(`the server at ${server.shown} ended this event stream: ${DROPPED_REASON}`);
    return EXIT_FAILURE;
  }
  io.err(`the server at ${server.shown} stopped`);
  return EXIT_OK;
}

function failed(io: CommandIO, err: Error): number {
  io.err(
    err instanceof ControlError ? `the server refused: ${err.message}` : `cannot reach the server: ${err.message}`,
  );
  return EXIT_FAILURE;
}

/** `12:03:04.123 GET /mock/users/42?x=1 → 200 response (GET /users/:id) 1.2 ms`, with notes after. */
export function formatEntry(e: JournalEntry): string {
  const query = new URLSearchParams(
    Object.entries(e.query).flatMap(([k, v]) => (Array.isArray(v) ? v : [v]).map((x): [string, string] => [k, x])),
  ).toString();
  const endpoint = e.endpoint === null ? '' : ` (${e.endpoint})`;
  const notes = e.notes.length === 0 ? '' : ` — ${e.notes.join('; ')}`;
  return `${e.time} #${e.id} ${e.method} ${e.path}${query === '' ? '' : `?${query}`} → ${e.status} ${e.step}${endpoint} ${e.ms} ms${notes}`;
}

/** The entry's line, then each of its violations: `  body /amount exclusiveMinimum: body field amount must be > 0`. */
export function formatWithViolations(e: JournalEntry): string {
  return [
    formatEntry(e),
    ...(e.violations ?? []).map((v) => `  ${v.in} ${v.pointer === '' ? '/' : v.pointer} ${v.keyword}: ${v.message}`),
  ].join('\n');
}

/**
 * Why `--session <id>` names nothing to show, or undefined when the server holds that session: an
 * admin call naming a session makes it, and a listing of a new, empty one would say nothing wrong.
 */
export async function missingSession(url: string, token: string | undefined, id: string): Promise<string | undefined> {
  try {
    // Asked by its id (a call naming a session lists that one alone, and makes none): the list
    // shows an id that is or holds a key as `<redacted>`, which no id given here would equal.
    const own = await connectMockServer(url, { adminToken: token, session: id }).sessions.list();
    if (own.length > 0) return undefined;
    const sessions = await connectMockServer(url, { adminToken: token }).sessions.list();
    return `the server at ${url} has no session "${id}"${sessions.length === 0 ? ' (it has none)' : `; its sessions: ${sessions.map((s) => s.id).join(', ')}`}`;
  } catch (err) {
    return err instanceof ControlError
      ? `the server refused: ${err.message}`
      : `cannot reach the server: ${(err as Error).message}`;
  }
}

async function openEvents(
  url: string,
  token: string | undefined,
  session: string | undefined,
): Promise<ReadableStream<Uint8Array>> {
  const headers: Record<string, string> = { accept: 'text/event-stream' };
  if (token !== undefined && token !== '') headers['x-mockapi-admin-token'] = token;
  if (session !== undefined) headers['x-mockapi-session'] = session;
  const res = await fetch(`${url}/__mockapi/events`, { headers });
  if (!res.ok || res.body === null) {
    const answer = (await res.json().catch(() => ({}))) as { error?: string; message?: string };
    throw new ControlError(res.status, answer.error ?? 'error', answer.message ?? `events answered ${res.status}`);
  }
  return res.body;
}

const DROPPED_REASON =
  'this reader fell too far behind (the server keeps at most 4 MiB of events for a reader that does not read); run it again to go on';

/**
 * Reads Server-Sent Events until the stream ends, handing each `request` event's entry to
 * `onEntry`; `dropped` when the server ended it because this reader fell behind.
 * @internal exported for tests
 */
export function readEvents(
  stream: ReadableStream<Uint8Array>,
  onEntry: (entry: JournalEntry) => void,
): Promise<'ended' | 'dropped'> {
  return readServerEvents(stream, 'request', (data) => onEntry(data as JournalEntry));
}

/**
 * Reads the admin API's Server-Sent Events until the stream ends, handing the parsed `data` of
 * each event named `name` to `onData`; `dropped` when the server ended it because this reader fell
 * behind. Shared by `mockapi requests --follow` and `mockapi webhooks list --follow`.
 */
export async function readServerEvents(
  stream: ReadableStream<Uint8Array>,
  name: string,
  onData: (data: unknown) => void,
): Promise<'ended' | 'dropped'> {
  const decoder = new TextDecoder();
  let text = '';
  try {
    for await (const chunk of stream as unknown as AsyncIterable<Uint8Array>) {
      text += decoder.decode(chunk, { stream: true });
      let end: number;
      while ((end = text.indexOf('\n\n')) !== -1) {
        const block = text.slice(0, end);
        text = text.slice(end + 2);
        if (block.startsWith(': dropped:')) return 'dropped';
        const event = /^event: (.*)$/m.exec(block)?.[1];
        const data = /^data: (.*)$/m.exec(block)?.[1];
        if (event === name && data !== undefined) onData(JSON.parse(data));
      }
    }
  } catch {
    // The server went away mid-stream: as good as the end of it.
  }
  return 'ended';
}
