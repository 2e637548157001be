// Helpers for the control-plane tests: admin calls with exact statuses, headers and bodies.
import { request } from 'undici';

export interface AdminAnswer {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: any;
}

/** Calls the admin API; a body is sent as JSON with `Content-Type: application/json` unless headers say otherwise. */
export async function admin(
  url: string,
  method: string,
  path: string,
  body?: unknown,
  headers: Record<string, string> = {},
): Promise<AdminAnswer> {
  const sendsBody = method !== 'GET' && method !== 'HEAD';
  const res = await request(`${url}/__mockapi/${path}`, {
    method: method as 'GET',
    headers: { ...(sendsBody ? { 'content-type': 'application/json' } : {}), ...headers },
    body: sendsBody ? (typeof body === 'string' ? body : JSON.stringify(body ?? {})) : undefined,
  });
  const text = await res.body.text();
  return { status: res.statusCode, headers: res.headers, body: text === '' ? undefined : JSON.parse(text) };
}

/** A mock request; resolves with status and parsed-or-text body. */
export async function mock(
  url: string,
  method: string,
  path: string,
  options: { headers?: Record<string, string>; body?: string } = {},
): Promise<{ status: number; headers: Record<string, string | string[] | undefined>; text: string }> {
  const res = await request(`${url}${path}`, { method: method as 'GET', headers: options.headers, body: options.body });
  return { status: res.statusCode, headers: res.headers, text: await res.body.text() };
}
