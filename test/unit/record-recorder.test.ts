// Unit tests of the recorder: identical answers are held once (memory follows the distinct answers,
// not the number of requests), and a worker's part hands its exchanges over in capture order.
import { describe, expect, it } from 'vitest';
import type { RecordedExchange } from '../../src/record/exchange.js';
import type { Worker } from 'node:cluster';
import { createRecordingPrimary } from '../../src/record/workers-recording.js';
import { createRecorder, type TakenPart } from '../../src/record/recorder.js';
import type { WriteOutcome } from '../../src/record/write.js';

const exchange = (path: string, body: string): Omit<RecordedExchange, 'seq'> => ({
  method: 'GET',
  path,
  query: {},
  // Fresh strings and buffers each time, as the HTTP parser and the upstream client give them.
  requestHeaders: { accept: ['application', 'json'].join('/') },
  status: 200,
  responseHeaders: [['content-type', ['application', 'json'].join('/')]],
  responseBody: Buffer.from(body),
});

function recorderWith(gather?: (active: boolean) => Promise<TakenPart[]>) {
  const written: Array<readonly RecordedExchange[]> = [];
  let clock = 0;
  const recorder = createRecorder({
    mode: 'new',
    only: [],
    recordRefusals: () => false,
    now: () => ++clock,
    async write(exchanges): Promise<WriteOutcome> {
      written.push(exchanges);
      return { code: 0, lines: [] };
    },
    ...(gather === undefined ? {} : { gather }),
  });
  return { recorder, written };
}

describe('recorder', () => {
  it('holds identical answer bodies once, however many requests got them', async () => {
    const { recorder, written } = recorderWith();
    for (let i = 0; i < 50; i++)
      recorder.sink.capture(exchange(`/items/${i % 2}`, i % 2 === 0 ? '{"even":true}' : '{"odd":true}'));
    await recorder.finish();
    const [all] = written;
    expect(all).toHaveLength(50);
    const distinct = new Set(all!.map((e) => e.responseBody));
    expect(distinct.size).toBe(2);
    expect(all![2]!.responseBody).toBe(all![0]!.responseBody);
    expect(all![1]!.responseBody.toString()).toBe('{"odd":true}');
    expect(all!.map((e) => e.seq)).toEqual(Array.from({ length: 50 }, (_, i) => i));
  });

  it('hands a part over (then holds nothing) and orders gathered parts by capture time', async () => {
    const worker = recorderWith().recorder;
    worker.sink.capture(exchange('/a', 'A'));
    worker.sink.capture(exchange('/c', 'C'));
    const part = worker.take(false);
    expect(worker.sink.active).toBe(false);
    expect(part.exchanges.map((e) => [e.at, e.exchange.path])).toEqual([
      [1, '/a'],
      [2, '/c'],
    ]);
    expect(worker.take().exchanges).toEqual([]);

    const other: TakenPart = { exchanges: [{ at: 1.5, exchange: exchange('/b', 'B') }], refused: 1, outside: 0 };
    const { recorder, written } = recorderWith(async () => [part, other]);
    await recorder.finish();
    expect(written[0]!.map((e) => [e.seq, e.path])).toEqual([
      [0, '/a'],
      [1, '/b'],
      [2, '/c'],
    ]);
  });
});

describe('recording over several workers (primary end)', () => {
  /** A stand-in for a node:cluster worker: what the primary sent it. */
  const fakeWorker = () => {
    const sent: any[] = [];
    return { sent, worker: { isConnected: () => true, send: (m: unknown) => sent.push(m) } as unknown as Worker };
  };

  it('takes every worker part, and a worker that joins while recording is stopped is told to stop too', async () => {
    const primary = createRecordingPrimary();
    const a = fakeWorker();
    primary.join(a.worker);
    const gathered = primary.gather(false);
    expect(a.sent).toEqual([{ type: 'mockapi:rec-take', take: 1, active: false }]);
    const part = {
      exchanges: [
        {
          at: 5,
          exchange: {
            ...exchange('/x', 'X'),
            requestBody: undefined,
            responseBody: Buffer.from('X').toString('base64'),
          },
        },
      ],
      refused: 0,
      outside: 2,
    };
    expect(primary.receive(a.worker, { type: 'mockapi:rec-part', take: 1, part })).toBe(true);
    const [taken] = await gathered;
    expect(taken!.outside).toBe(2);
    expect(taken!.exchanges[0]!.exchange.responseBody.toString()).toBe('X');

    const replacement = fakeWorker();
    primary.join(replacement.worker);
    expect(replacement.sent).toEqual([{ type: 'mockapi:rec-take', take: 0, active: false }]);
    expect(primary.receive(a.worker, { type: 'mockapi:ready' })).toBe(false);
  });
});
