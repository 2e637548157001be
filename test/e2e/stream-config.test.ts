// Config errors of streamed answers, each at its line and column, at `validate`.
import { readFile } from 'node:fs/promises';
import { afterAll, describe, expect, test } from 'vitest';
import { runCli, startServe, stopAll, tempDir, writeConfig } from '../helpers/cli.js';

afterAll(stopAll);

describe('config errors of streams', () => {
  test('body beside stream, a preset with options it does not take, a fault after the last event, and more', async () => {
    const dir = await tempDir();
    const text = await readFile(new URL('../fixtures/stream-bad.yaml', import.meta.url), 'utf8');
    const file = await writeConfig(dir, text);
    const { code, stdout, stderr } = await runCli(['validate', '-c', file]);
    expect(code).toBe(1);
    const lines = (stdout + stderr)
      .trim()
      .split('\n')
      .map((l) => l.replace(`${file}:`, 'F:'));
    expect(lines).toEqual([
      "F:7:7: endpoints[0].response cannot have both `body` and `stream`; a streamed answer's content is its events, keep one",
      'F:14:9: endpoints[1].response.stream.format is not an option of preset openai-chat (its options: text, chunkBy, model, finishReason, firstByte, gap, faults); remove it, or drop `preset` to write the events yourself',
      'F:15:9: endpoints[1].response.stream.events is not an option of preset openai-chat (its options: text, chunkBy, model, finishReason, firstByte, gap, faults); remove it, or drop `preset` to write the events yourself',
      'F:17:33: endpoints[1].response.stream.faults[0].after is 9 events, but the stream has only 5; use a number from 0 to 5',
      'F:18:49: endpoints[1].response.stream.faults[1].for only applies to kind stall, not reset; remove it',
      'F:24:9: endpoints[2].response.stream.chunkBy only applies with a `preset` (openai-chat, openai-responses, anthropic); explicit streams list `events`',
      'F:25:14: endpoints[2].response.stream.gap needs `max` beside `min`',
      'F:27:15: endpoints[2].response.stream.events[0].event only applies to format sse, not ndjson; remove it',
      'F:27:34: endpoints[2].response.stream.events[0].data unknown function `nt`; did you mean `int`?',
      'F:30:40: endpoints[2].response.stream.faults[0].after is 4 events, but the stream has only 3; use a number from 0 to 3',
      'F:30:49: endpoints[2].response.stream.faults[0].rate must be between 0 and 1, got 1.5',
      'F:34:15: endpoints[3].response.stream needs `preset` (with `text`) or `events`',
      'F:34:28: endpoints[3].response.stream.firstByte must be a duration: whole milliseconds (120) or a number with a unit (250ms, 2s, 1m, 1h), got "10xs"',
      'F:38:15: endpoints[4].response.status is 204, an answer without a body: it cannot carry a stream; use a status such as 200',
    ]);
  });

  test('an unknown preset and an unknown field of a stream are refused', async () => {
    const dir = await tempDir();
    const file = await writeConfig(
      dir,
      `apiKey: mk_streamTest0000000000000000000001
endpoints:
  - method: GET
    path: /a
    response:
      stream: { preset: openai-chatt, text: hi, colour: blue }
`,
    );
    const { code, stdout, stderr } = await runCli(['validate', '-c', file]);
    expect(code).toBe(1);
    const out = (stdout + stderr).replaceAll(`${file}:`, 'F:');
    expect(out.trim().split('\n')).toEqual([
      'F:6:25: endpoints[0].response.stream.preset must be one of openai-chat, openai-responses, anthropic, got "openai-chatt"; did you mean `openai-chat`?',
      'F:6:49: endpoints[0].response.stream.colour is not a known field; expected one of preset, text, chunkBy, model, finishReason, format, events, firstByte, gap, faults',
    ]);
  });

  test('a chunkBy of 0 or less is a config error and a stub 400, never a hang or a crash', async () => {
    const dir = await tempDir();
    const file = await writeConfig(
      dir,
      `apiKey: mk_streamTest0000000000000000000001
endpoints:
  - method: GET
    path: /zero
    response:
      stream: { preset: openai-chat, text: "a b", chunkBy: 0 }
  - method: GET
    path: /negative
    response:
      stream: { preset: anthropic, text: "a b", chunkBy: -1 }
`,
    );
    const { code, stdout, stderr } = await runCli(['validate', '-c', file]);
    expect(code).toBe(1);
    const out = (stdout + stderr).replaceAll(`${file}:`, 'F:');
    expect(out.trim().split('\n')).toEqual([
      'F:6:60: endpoints[0].response.stream.chunkBy must be between 1 and 1000000, got 0',
      'F:10:58: endpoints[1].response.stream.chunkBy must be between 1 and 1000000, got -1',
    ]);
    const ok = await writeConfig(dir, 'apiKey: mk_streamTest0000000000000000000001\n', 'ok.yaml');
    const server = await startServe(['-c', ok], { cwd: dir });
    const res = await fetch(`${server.url}/__mockapi/stubs`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({
        endpoint: { method: 'GET', path: '/s', response: { stream: { preset: 'openai-chat', text: 'a', chunkBy: 0 } } },
      }),
    });
    expect(res.status).toBe(400);
    expect(((await res.json()) as { error: string }).error).toBe('invalid_stub');
    expect((await fetch(`${server.url}/__mockapi/health`)).status).toBe(200);
  });
});
