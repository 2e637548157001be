/**
 * The scripts the limit store sends, each with its SHA1 (EVALSHA), the period letters they read,
 * and a client of the store that loads every script on each connection.
 */
import { createHash } from 'node:crypto';
import type { MeterConfig } from '../config/types.js';
import {
  ADD_USAGE_SCRIPT,
  ADMIT_SCRIPT,
  COUNT_SCRIPT,
  RESET_USAGE_SCRIPT,
  RESET_WINDOWS_SCRIPT,
  STATUS_SCRIPT,
  USAGE_SCRIPT,
} from './limit-script.js';
import { METERED_ADMIT_SCRIPT } from './meter-script.js';
import { SETTLE_SCRIPT } from './meter-settle-script.js';
import { METER_STATUS_SCRIPT, RESET_METERS_SCRIPT, SET_METER_SCRIPT } from './meter-usage-script.js';
import { newClient, type Client } from './redis-client.js';

const script = (source: string) => ({ source, sha: createHash('sha1').update(source).digest('hex') });
export const SCRIPTS = {
  admit: script(ADMIT_SCRIPT),
  usage: script(USAGE_SCRIPT),
  status: script(STATUS_SCRIPT),
  reset: script(RESET_USAGE_SCRIPT),
  add: script(ADD_USAGE_SCRIPT),
  count: script(COUNT_SCRIPT),
  resetWindows: script(RESET_WINDOWS_SCRIPT),
  meteredAdmit: script(METERED_ADMIT_SCRIPT),
  settle: script(SETTLE_SCRIPT),
  meterStatus: script(METER_STATUS_SCRIPT),
  setMeter: script(SET_METER_SCRIPT),
  resetMeters: script(RESET_METERS_SCRIPT),
};

/** The period of a meter as the scripts write it. */
export const PERIOD: Record<MeterConfig['period'], string> = { window: 'w', month: 'm', total: 't' };

/** A client of the store at `url`, as the limits use it. */
export function makeClient(url: string): Client {
  const client = newClient(url);
  // Every script loaded first on each connection (a fresh or restarted Redis has none), before any
  // command of the stores using it: a call refused for lack of its script is sent again a round trip
  // later, after commands sent behind it (a reset would then run before counts made before it).
  client.on('ready', () => {
    for (const { source } of Object.values(SCRIPTS)) client.sendCommand(['SCRIPT', 'LOAD', source]).catch(() => {});
  });
  return client;
}
