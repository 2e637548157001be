// Unit tests of src/stream/preset-template.ts: a preset stream of fixed text framed once at load,
// each request filling in its id, time and model, byte for byte what framing every event gives.
import { describe, expect, test } from 'vitest';
import { createAnswerRandom, type RequestContext } from '../../src/expression/index.js';
import { compileStream } from '../../src/stream/compile.js';
import { frameEvent } from '../../src/stream/frame.js';
import { buildStream, STREAM_PRESETS } from '../../src/config/stream-model.js';
import { presetTemplate } from '../../src/stream/preset-template.js';
import { presetEvents } from '../../src/stream/presets.js';
import { chunkText, presetEventCount } from '../../src/config/stream-text.js';

const sse = (e: Parameters<typeof frameEvent>[1]) => frameEvent('sse', e);
const TEXTS = [
  [],
  ['a'],
  [
    'Hel',
    'lo',
    ' "quoted"',
    ' line\nbreak\r\n',
    ' \u2028sep',
    ' 😀',
    ' \\back',
    ' </script>',
    ' \u0000nul',
    ' 4000000000',
    ' chatcmpl-',
  ],
];
const VARS = [
  { id: 'Ab3dEf9hIj2kLm5nOp7qRs1t', created: 1767225600, model: 'gpt-x' },
  { id: 'x', created: 0, model: 'a "model"\nwith lines\u2028and 😀 \\ </script>' },
  { id: '\u0001mockapi stream id\u0001', created: 4_000_000_000_017, model: '\u0001mockapi model\u0001' },
  { id: 'z', created: -3, model: '\u0000mockapi chunk text\u0000' },
];

describe('preset streams framed once at load', () => {
  test('every preset, odd texts and odd request values: the filled template is the events framed one by one', () => {
    for (const preset of STREAM_PRESETS) {
      for (const chunks of TEXTS) {
        for (const finish of [undefined, 'length']) {
          const template = presetTemplate(preset, chunks, finish, sse);
          expect(template).toBeDefined();
          for (const vars of VARS) {
            const framed = presetEvents(preset, chunks, vars, finish).map(sse);
            expect(template?.fill(vars)).toEqual(framed);
            // Its length (the answer cap's measure) is known without framing, and one event at a time is the same.
            expect(template?.length(vars)).toBe(framed.join('').length);
            const at = template!.filler(vars);
            expect(framed.map((_, i) => at(i))).toEqual(framed);
            expect(framed.length).toBe(presetEventCount(preset, chunks.length));
          }
        }
      }
    }
  });

  test('fixed text that holds a stand-in is not cut there: no template, each request framed as before', () => {
    for (const text of ['4000000000017', '\u0001mockapi stream id\u0001', '\u0001mockapi model\u0001']) {
      expect(presetTemplate('openai-chat', [text], undefined, sse)).toBeUndefined();
      const plan = compileStream(buildStream({ preset: 'openai-chat', text: `say ${text}`, gap: 0 }), {});
      const ctx = {
        params: {},
        query: {},
        headers: {},
        cookies: {},
        body: { model: 'm' },
        request: 1,
        state: {},
        now: 4_000_000_000_017_000,
        random: createAnswerRandom(1, 'POST /c', 1),
      } as RequestContext;
      const rendered = plan.render(ctx, createAnswerRandom(7, 'x', 1));
      const id = /"chatcmpl-(\w+)"/.exec(rendered.chunks[0] ?? '')?.[1] ?? '';
      const chunks = chunkText(`say ${text}`, 'word');
      expect(rendered.chunks).toEqual(
        presetEvents('openai-chat', chunks, { id, created: 4_000_000_000_017, model: 'm' }, undefined).map(sse),
      );
    }
  });

  test('a compiled preset stream of fixed text: the same bytes for two requests apart from id, time and model; waits shared', () => {
    const plan = compileStream(buildStream({ preset: 'anthropic', text: 'Hello there, friend.', gap: 0 }), {});
    const ctx = (n: number, model: string) =>
      ({
        params: {},
        query: {},
        headers: {},
        cookies: {},
        body: { model },
        request: n,
        state: {},
        now: Date.UTC(2026, 0, 1) + n * 1000,
        random: createAnswerRandom(1, 'POST /c', n),
      }) as RequestContext;
    const a = plan.render(ctx(1, 'm-one'), createAnswerRandom(7, 'x', 1));
    const b = plan.render(ctx(2, 'm "two"'), createAnswerRandom(7, 'x', 2));
    expect(a.chunks.join('')).toContain('"model":"m-one"');
    expect(b.chunks.join('')).toContain('"model":"m \\"two\\""');
    expect(b.waits).toBe(a.waits);
    expect(a.waits).toEqual(new Array(a.chunks.length).fill(0));
    // Text with an expression is not fixed: each request's own text, framed for it.
    const per = compileStream(buildStream({ preset: 'anthropic', text: 'Hi ${body.model}', gap: 0 }), {});
    expect(per.render(ctx(1, 'one'), createAnswerRandom(7, 'x', 1)).chunks.join('')).toContain('"text":" one"');
    expect(per.render(ctx(2, 'two'), createAnswerRandom(7, 'x', 2)).chunks.join('')).toContain('"text":" two"');
  });
});
