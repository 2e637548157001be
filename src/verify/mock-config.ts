import { isAbsolute, resolve } from 'node:path';

type Obj = Record<string, unknown>;
const isObject = (v: unknown): v is Obj => v !== null && typeof v === 'object' && !Array.isArray(v);

/** The keys of an endpoint or an answer that hold answers. */
const ANSWER_LISTS = ['responses', 'sequence', 'pick'] as const;

/** An answer without what would make the same request answer differently or act elsewhere: delays, faults, webhooks. */
function calmAnswer(raw: Obj, dir: string): Obj {
  const out: Obj = { ...raw };
  delete out.delay;
  delete out.faults;
  delete out.send;
  if (typeof out.bodyFile === 'string' && !isAbsolute(out.bodyFile)) out.bodyFile = resolve(dir, out.bodyFile);
  for (const kind of ANSWER_LISTS) {
    if (Array.isArray(out[kind]))
      out[kind] = (out[kind] as unknown[]).map((item) => (isObject(item) ? calmAnswer(item, dir) : item));
  }
  if (isObject(out.stream)) {
    const stream: Obj = { ...out.stream };
    delete stream.faults;
    delete stream.firstByte;
    delete stream.gap;
    if (Array.isArray(stream.events))
      stream.events = stream.events.map((e) =>
        isObject(e) ? Object.fromEntries(Object.entries(e).filter(([k]) => k !== 'gap')) : e,
      );
    out.stream = stream;
  }
  return out;
}

function calmEndpoint(raw: Obj, dir: string): Obj {
  const out = calmAnswer(raw, dir);
  delete out.failRate;
  delete out.limits;
  if (isObject(out.response)) out.response = calmAnswer(out.response, dir);
  if (typeof out.openapiSpec === 'string') out.openapiSpec = resolve(dir, out.openapiSpec.trim());
  return out;
}

/**
 * The config a verify run serves, from the user's (already valid) config data: the same endpoints,
 * answers, expressions, validation and errors, so the mock answers an example as it would answer a
 * client — without what would make one request's answer differ from the next or reach outside:
 * no fail rate, faults, delays or stream pauses, no limits or keys' plans (every example is
 * admitted with the config's own key), no webhooks sent, no upstream (an example the mock does not
 * answer is not passed on), no HTTPS, no journal. Relative files are made absolute against `dir`.
 */
export function verifyServedConfig(data: Obj, dir: string): Obj {
  const out: Obj = { ...data };
  // `auth` (where keys are read from) too: every example carries the config's own key in X-API-Key.
  for (const key of ['upstream', 'webhooks', 'recording', 'keys', 'plans', 'limits', 'auth']) delete out[key];
  out.project = typeof data.project === 'string' ? data.project : 'mockapi-verify';
  if (isObject(out.server)) {
    const server: Obj = { ...out.server };
    for (const key of ['https', 'port', 'host']) delete server[key];
    server.journal = 0;
    out.server = server;
  } else out.server = { journal: 0 };
  if (isObject(out.openapi) && typeof out.openapi.spec === 'string')
    out.openapi = { ...out.openapi, spec: resolve(dir, out.openapi.spec) };
  if (Array.isArray(out.endpoints)) out.endpoints = out.endpoints.map((e) => (isObject(e) ? calmEndpoint(e, dir) : e));
  return out;
}
