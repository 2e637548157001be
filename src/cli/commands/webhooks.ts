import { connectMockServer } from '../../connect.js';
import { ControlError } from '../../control/control-error.js';
import type { Delivery } from '../../webhooks/log.js';
import { EXIT_FAILURE, EXIT_OK, type CommandIO } from './io.js';
import { newestServerUrl } from './running-server.js';
import { readServerEvents } from './requests.js';

export interface WebhooksOptions {
  config: string;
  follow?: boolean;
  json?: boolean;
  adminToken?: string;
  /** `trigger`: the target (default: the only one, when there is one). */
  to?: string;
  /** `trigger`: JSON laid over the event template's data. */
  data?: string;
}

function failed(io: CommandIO, err: Error): number {
  io.err(
    err instanceof ControlError ? `the server refused: ${err.message}` : `cannot reach the server: ${err.message}`,
  );
  return EXIT_FAILURE;
}

/** `12:03:04.123Z whd_3 charge.succeeded → app delivered (attempts: 500, 200)`. */
export function formatDelivery(d: Delivery): string {
  const attempts = d.attempts.map((a) => (a.status === null ? (a.error ?? 'error') : String(a.status))).join(', ');
  const next = d.nextAttempt === null ? '' : `, next ${d.nextAttempt}`;
  const error = d.error === null ? '' : ` — ${d.error}`;
  return `${d.id} ${d.event} (${d.eventId}) → ${d.target} ${d.status}${attempts === '' ? '' : ` (attempts: ${attempts}${next})`}${error}`;
}

/** `mockapi webhooks list [-f]`: the delivery log of the running server; `-f` then prints each change as it happens. */
export async function runWebhooksList(opts: WebhooksOptions, io: CommandIO): Promise<number> {
  const url = await newestServerUrl(opts.config, io);
  if (url === undefined) return EXIT_FAILURE;
  const token = opts.adminToken ?? process.env.MOCKAPI_ADMIN_TOKEN;
  const print = (d: Delivery): void => io.out(opts.json ? JSON.stringify(d) : formatDelivery(d));
  let stream: ReadableStream<Uint8Array> | undefined;
  try {
    if (opts.follow) {
      const headers: Record<string, string> = { accept: 'text/event-stream' };
      if (token !== undefined && token !== '') headers['x-mockapi-admin-token'] = token;
      const res = await fetch(`${url}/__mockapi/events`, { headers });
      if (!res.ok || res.body === null) throw new ControlError(res.status, 'error', `events answered ${res.status}`);
      stream = res.body;
    }
    const client = connectMockServer(url, token === undefined ? {} : { adminToken: token });
    for (const d of await client.webhooks.deliveries()) print(d);
  } catch (err) {
    await stream?.cancel().catch(() => {});
    return failed(io, err as Error);
  }
  if (stream === undefined) return EXIT_OK;
  await readServerEvents(stream, 'webhook', (data) => print(data as Delivery));
  io.err('the server stopped');
  return EXIT_OK;
}

/** `mockapi webhooks trigger <event> [--to <target>] [--data <json>]`: sends an event of the config now. */
export async function runWebhooksTrigger(event: string, opts: WebhooksOptions, io: CommandIO): Promise<number> {
  let data: unknown;
  if (opts.data !== undefined) {
    try {
      data = JSON.parse(opts.data);
    } catch {
      io.err(`--data must be JSON, got ${JSON.stringify(opts.data)}`);
      return EXIT_FAILURE;
    }
  }
  const url = await newestServerUrl(opts.config, io);
  if (url === undefined) return EXIT_FAILURE;
  const token = opts.adminToken ?? process.env.MOCKAPI_ADMIN_TOKEN;
  const client = connectMockServer(url, token === undefined ? {} : { adminToken: token });
  try {
    let to = opts.to;
    if (to === undefined) {
      const targets = await client.webhooks.targets();
      if (targets.length !== 1) {
        io.err(
          `name the target with --to: ${targets.length === 0 ? 'the config has no webhooks.targets' : `one of ${targets.map((t) => t.name).join(', ')}`}`,
        );
        return EXIT_FAILURE;
      }
      to = (targets[0] as { name: string }).name;
    }
    const delivery = await client.webhooks.trigger({ event, to, ...(data === undefined ? {} : { data }) });
    io.out(opts.json ? JSON.stringify(delivery) : formatDelivery(delivery));
    return EXIT_OK;
  } catch (err) {
    return failed(io, err as Error);
  }
}
