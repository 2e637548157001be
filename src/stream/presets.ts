import type { StreamConfig, StreamPreset } from '../config/stream-model.js';
import { chunkBounds, chunkText, presetEventCount } from '../config/stream-text.js';

/** An event ready to frame: its data is text or a value written as JSON. */
export interface PlainEvent {
  event?: string;
  id?: string;
  data?: unknown;
  comment?: string;
  gapMs?: number;
}

/** What stays the same across one stream's events: the provider's ids, the time and the model. */
export interface PresetVars {
  /** Random letters and digits drawn for this stream (ids are made from it). */
  readonly id: string;
  /** Seconds since the epoch, the server's clock when the request arrived. */
  readonly created: number;
  readonly model: string;
  /** The prompt's tokens as the mock counts them (see `promptTokens`); 1 when not given. */
  readonly inputTokens?: number;
  /** openai-chat: the request asked for the usage chunk (`stream_options.include_usage`), as OpenAI sends it then only. */
  readonly includeUsage?: boolean;
}

/**
 * The prompt's tokens as the mock counts them: a quarter of the characters of its JSON (OpenAI's
 * rule of thumb), at least 1 — the messages (and system) of a chat or Anthropic request, the input
 * (and instructions) of a Responses request. The answer's tokens are its text chunks.
 */
export function promptTokens(preset: StreamPreset, body: unknown): number {
  const b = (body !== null && typeof body === 'object' ? body : {}) as Record<string, unknown>;
  const parts =
    preset === 'openai-responses'
      ? [b.input, b.instructions]
      : preset === 'anthropic'
        ? [b.system, b.messages]
        : [b.messages];
  const chars = parts.reduce<number>(
    (sum, part) => sum + (part === undefined ? 0 : (JSON.stringify(part)?.length ?? 0)),
    0,
  );
  return Math.max(1, Math.ceil(chars / 4));
}

/** The model named when neither the request nor the config names one. */
export const DEFAULT_MODEL = 'mock-model';

/** What a preset reads of its text's chunks: how many, and the whole text (an array of them, or a view of one text). */
export interface ChunkView {
  readonly length: number;
  join(separator: ''): string;
}

/** The finish reason each preset sends when the config gives none. */
const DEFAULT_FINISH: Record<StreamPreset, string> = {
  'openai-chat': 'stop',
  'openai-responses': 'completed',
  anthropic: 'end_turn',
};

/** A preset stream in three parts: the events before the text, one event per text chunk, the events after. */
export interface PresetParts {
  readonly head: readonly PlainEvent[];
  /** The event of one chunk; `index` is its place in the whole stream. */
  delta(text: string, index: number): PlainEvent;
  readonly tail: readonly PlainEvent[];
}

/** The parts of a preset stream for `chunks`, in the provider's wire format. */
export function presetParts(
  preset: StreamPreset,
  chunks: ChunkView,
  vars: PresetVars,
  finishReason: string | undefined,
): PresetParts {
  const finish = finishReason ?? DEFAULT_FINISH[preset];
  switch (preset) {
    case 'openai-chat':
      return openAiChat(vars, finish, chunks.length);
    case 'openai-responses':
      return openAiResponses(chunks, vars, finish);
    case 'anthropic':
      return anthropic(chunks, vars, finish);
  }
}

/** The events of a preset stream for `text`, in the provider's wire format. */
export function presetEvents(
  preset: StreamPreset,
  chunks: readonly string[],
  vars: PresetVars,
  finishReason: string | undefined,
): PlainEvent[] {
  const parts = presetParts(preset, chunks, vars, finishReason);
  return [...parts.head, ...chunks.map((text, i) => parts.delta(text, parts.head.length + i)), ...parts.tail];
}

function openAiChat(v: PresetVars, finish: string, outputTokens: number): PresetParts {
  const chunk = (delta: object, finishReason: string | null): PlainEvent => ({
    data: {
      id: `chatcmpl-${v.id}`,
      object: 'chat.completion.chunk',
      created: v.created,
      model: v.model,
      system_fingerprint: null,
      choices: [{ index: 0, delta, logprobs: null, finish_reason: finishReason }],
    },
  });
  const input = v.inputTokens ?? 1;
  // With stream_options.include_usage, OpenAI sends the usage in one more chunk without choices.
  const usage: PlainEvent[] =
    v.includeUsage === true
      ? [
          {
            data: {
              id: `chatcmpl-${v.id}`,
              object: 'chat.completion.chunk',
              created: v.created,
              model: v.model,
              system_fingerprint: null,
              choices: [],
              usage: { prompt_tokens: input, completion_tokens: outputTokens, total_tokens: input + outputTokens },
            },
          },
        ]
      : [];
  return {
    head: [chunk({ role: 'assistant', content: '' }, null)],
    delta: (content) => chunk({ content }, null),
    tail: [chunk({}, finish), ...usage, { data: '[DONE]' }],
  };
}

function openAiResponses(chunks: ChunkView, v: PresetVars, finish: string): PresetParts {
  const text = chunks.join('');
  const itemId = `msg_${v.id}`;
  const base = {
    id: `resp_${v.id}`,
    object: 'response',
    created_at: v.created,
    model: v.model,
    error: null,
    incomplete_details: null,
    instructions: null,
    metadata: {},
    parallel_tool_calls: true,
    temperature: 1,
    tool_choice: 'auto',
    tools: [],
    top_p: 1,
  };
  const part = { type: 'output_text', text, annotations: [] };
  const doneItem = { id: itemId, type: 'message', status: 'completed', role: 'assistant', content: [part] };
  const event = (type: string, index: number, fields: object): PlainEvent => ({
    event: type,
    data: { type, sequence_number: index, ...fields },
  });
  const head: Array<[string, object]> = [
    ['response.created', { response: { ...base, status: 'in_progress', output: [] } }],
    ['response.in_progress', { response: { ...base, status: 'in_progress', output: [] } }],
    [
      'response.output_item.added',
      { output_index: 0, item: { id: itemId, type: 'message', status: 'in_progress', role: 'assistant', content: [] } },
    ],
    [
      'response.content_part.added',
      { item_id: itemId, output_index: 0, content_index: 0, part: { type: 'output_text', text: '', annotations: [] } },
    ],
  ];
  const tail: Array<[string, object]> = [
    ['response.output_text.done', { item_id: itemId, output_index: 0, content_index: 0, text }],
    ['response.content_part.done', { item_id: itemId, output_index: 0, content_index: 0, part }],
    ['response.output_item.done', { output_index: 0, item: doneItem }],
    [
      `response.${finish}`,
      {
        response: {
          ...base,
          status: finish,
          output: [doneItem],
          usage: responsesUsage(v.inputTokens ?? 1, chunks.length),
        },
      },
    ],
  ];
  return {
    head: head.map(([type, fields], i) => event(type, i, fields)),
    delta: (delta, index) =>
      event('response.output_text.delta', index, { item_id: itemId, output_index: 0, content_index: 0, delta }),
    tail: tail.map(([type, fields], i) => event(type, head.length + chunks.length + i, fields)),
  };
}

/** The usage of a Responses answer, as OpenAI writes it. */
function responsesUsage(input: number, output: number): object {
  return {
    input_tokens: input,
    input_tokens_details: { cached_tokens: 0 },
    output_tokens: output,
    output_tokens_details: { reasoning_tokens: 0 },
    total_tokens: input + output,
  };
}

function anthropic(chunks: ChunkView, v: PresetVars, finish: string): PresetParts {
  const e = (type: string, fields: object = {}): PlainEvent => ({ event: type, data: { type, ...fields } });
  return {
    head: [
      e('message_start', {
        message: {
          id: `msg_${v.id}`,
          type: 'message',
          role: 'assistant',
          content: [],
          model: v.model,
          stop_reason: null,
          stop_sequence: null,
          usage: { input_tokens: v.inputTokens ?? 1, output_tokens: 1 },
        },
      }),
      e('content_block_start', { index: 0, content_block: { type: 'text', text: '' } }),
      e('ping'),
    ],
    delta: (text) => e('content_block_delta', { index: 0, delta: { type: 'text_delta', text } }),
    tail: [
      e('content_block_stop', { index: 0 }),
      e('message_delta', {
        delta: { stop_reason: finish, stop_sequence: null },
        usage: { output_tokens: chunks.length },
      }),
      e('message_stop'),
    ],
  };
}

/**
 * The usage a preset stream carried once `sent` of its events went out (a cut or an error stream
 * carried less), merged as a client reads it: openai-chat's usage of the text sent, whether or not
 * the wire had the usage chunk; the Responses completion's; Anthropic's message_start input and
 * message_delta output. Undefined when it carried none.
 */
export function presetUsage(
  preset: StreamPreset,
  chunks: number,
  vars: PresetVars,
  sent: number,
): Record<string, number> | undefined {
  const input = vars.inputTokens ?? 1;
  const total = presetEventCount(preset, chunks, vars.includeUsage === true);
  if (preset === 'anthropic') {
    if (sent < 1) return undefined;
    // message_delta is the second event from the end.
    return { input_tokens: input, output_tokens: sent >= total - 1 ? chunks : 1 };
  }
  if (preset === 'openai-responses')
    return sent >= total ? { input_tokens: input, output_tokens: chunks, total_tokens: input + chunks } : undefined;
  // openai-chat: the deltas sent, after the first (role) chunk.
  const output = Math.max(0, Math.min(chunks, sent - 1));
  return sent < 1 ? undefined : { prompt_tokens: input, completion_tokens: output, total_tokens: input + output };
}

/** The error event a preset sends for an `error` fault without `data`. */
export function presetError(preset: StreamPreset | undefined): PlainEvent {
  if (preset === 'anthropic')
    return { event: 'error', data: { type: 'error', error: { type: 'overloaded_error', message: 'Overloaded' } } };
  if (preset === 'openai-responses')
    return {
      event: 'error',
      data: {
        type: 'error',
        code: 'server_error',
        message: 'The server had an error while processing your request.',
        param: null,
        sequence_number: 0,
      },
    };
  if (preset === 'openai-chat')
    return {
      data: {
        error: {
          message: 'The server had an error while processing your request.',
          type: 'server_error',
          param: null,
          code: null,
        },
      },
    };
  return { event: 'error', data: { error: { message: 'stream error' } } };
}
