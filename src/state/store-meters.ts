/**
 * Meters in the limit store: a plan's meters as their part of the scripts' ARGV and KEYS (made
 * once per list), and the commands that read, set and reset them.
 */
import type { MeterConfig } from '../config/types.js';
import type { MeterBatch } from './admit-batch.js';
import type { LimitStore, LimitStoreOptions } from './limit-store.js';
import { meterKeys } from './meter-script.js';
import type { StoreCommands } from './store-commands.js';
import { PERIOD, SCRIPTS } from './store-scripts.js';

/** What {@link meterBatches} makes: a list's batch, and the list of each batch made. */
export interface MeterBatches {
  meterBatch(meters: readonly MeterConfig[]): MeterBatch;
  readonly metersOf: WeakMap<MeterBatch, readonly MeterConfig[]>;
}

/** A plan's meters (one list per load) → their part of the scripts' ARGV and KEYS, made once. */
export function meterBatches(
  options: LimitStoreOptions,
  auditCap: number,
  meterSetKey: string,
  auditKey: string,
): MeterBatches {
  const batches = new WeakMap<readonly MeterConfig[], MeterBatch>();
  const listOf = new WeakMap<MeterBatch, readonly MeterConfig[]>();
  function meterBatch(meters: readonly MeterConfig[]): MeterBatch {
    let batch = batches.get(meters);
    if (batch === undefined) {
      const args = [
        String(meters.length),
        ...meters.flatMap((m) => [m.name, String(m.limit), String(m.windowMs), PERIOD[m.period]]),
      ];
      const keys = [
        ...meters.flatMap((m) => meterKeys(options.project, options.keyName, m.name, options.session)),
        meterSetKey,
        auditKey,
      ];
      const windows = meters.map((m) => (m.period === 'window' ? m.windowMs : 0));
      batch = { signature: args.join('/'), args, keys, count: meters.length, windows, auditCap };
      batches.set(meters, batch);
      listOf.set(batch, meters);
    }
    return batch;
  }
  return { meterBatch, metersOf: listOf };
}

/** The commands of the meters a key counted in: their status, set one, reset them. */
export function meterCommands(
  { run, send }: StoreCommands,
  meterBatch: MeterBatches['meterBatch'],
  options: LimitStoreOptions,
  meterSetKey: string,
): Pick<LimitStore, 'meterStatus' | 'setMeter' | 'resetMeters'> {
  return {
    async meterStatus(meters) {
      const batch = meterBatch(meters);
      const reply = (await run(SCRIPTS.meterStatus, [
        String(meters.length * 3),
        ...batch.keys.slice(0, meters.length * 3),
        ...batch.args,
      ])) as unknown[];
      const used: number[] = [];
      const resetMs: number[] = [];
      for (let i = 0; i < meters.length; i++) {
        used.push(Number(reply[2 * i]));
        resetMs.push(Number(reply[2 * i + 1]));
      }
      return { used, resetMs, month: String(reply[2 * meters.length]) };
    },
    async setMeter(meter, units) {
      await run(SCRIPTS.setMeter, [
        '4',
        ...meterKeys(options.project, options.keyName, meter.name, options.session),
        meterSetKey,
        meter.name,
        String(meter.windowMs),
        PERIOD[meter.period],
        String(units),
      ]);
    },
    async resetMeters(windows, counts) {
      const names = (await send(['SMEMBERS', meterSetKey])) as string[];
      if (names.length === 0) return;
      const keys = names.flatMap((name) => meterKeys(options.project, options.keyName, name, options.session));
      await run(SCRIPTS.resetMeters, [String(keys.length), ...keys, windows ? '1' : '0', counts ? '1' : '0']);
    },
  };
}
