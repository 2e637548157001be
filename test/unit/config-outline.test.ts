// The Endpoints view's and the scenario list's reading of a config: each answer's status, conditions,
// weight or steps, and the states each scenario is known to take.
import { describe, expect, it } from 'vitest';
import { answerOutline, scenarioStates } from '../../src/control/config-outline.js';
import { configFromObject } from '../../src/config/load.js';
import type { Config } from '../../src/config/types.js';

function config(value: unknown): Config {
  const result = configFromObject(value, '/tmp');
  if (!result.ok) throw new Error(JSON.stringify(result));
  return result.config;
}

const CONFIG = config({
  apiKey: 'mk_outline000000000000000000000001',
  scenarios: { cart: { initial: 'empty' }, door: { initial: 'shut' } },
  endpoints: [
    {
      method: 'GET',
      path: '/items/:id',
      responses: [
        { name: 'gone', when: { 'params.id': '7', 'state.cart': { in: ['full', 'paid'] } }, status: 410 },
        {
          when: { 'query.x': { matches: '^a' } },
          pick: [
            { weight: 2, status: 200, setState: { cart: 'full' } },
            { weight: 1, sequence: [{ times: 3, status: 503 }, { status: 200 }] },
          ],
        },
        { status: '${int(params.id)}', setState: { door: '${query.d}' } },
      ],
    },
    { method: 'POST', path: '/plain', response: { status: 201, name: 'made' } },
  ],
});

describe('answerOutline', () => {
  it('gives each answer, in config order, its status, conditions, weight, steps and hits', () => {
    const names = [
      'gone',
      'responses[1].pick[0]',
      'responses[1].pick[1].sequence[0]',
      'responses[1].pick[1].sequence[1]',
      'responses[2]',
    ];
    expect(answerOutline(CONFIG.endpoints[0]!, names, new Map([['gone', 4]]))).toEqual([
      { name: 'gone', status: 410, when: ['params.id = 7', 'state.cart {"in":["full","paid"]}'], requests: 4 },
      { name: 'responses[1].pick[0]', status: 200, when: ['query.x {"matches":"^a"}'], weight: 2, requests: 0 },
      {
        name: 'responses[1].pick[1].sequence[0]',
        status: 503,
        when: ['query.x {"matches":"^a"}'],
        weight: 1,
        times: 3,
        requests: 0,
      },
      {
        name: 'responses[1].pick[1].sequence[1]',
        status: 200,
        when: ['query.x {"matches":"^a"}'],
        weight: 1,
        times: 1,
        requests: 0,
      },
      { name: 'responses[2]', status: '${int(params.id)}', when: [], requests: 0 },
    ]);
    expect(answerOutline(CONFIG.endpoints[1]!, ['made'], undefined)).toEqual([
      { name: 'made', status: 201, when: [], requests: 0 },
    ]);
  });
});

describe('scenarioStates', () => {
  it('lists the initial state first, then every state set or compared with, and the current one', () => {
    expect(scenarioStates(CONFIG, { cart: 'empty', door: 'ajar' })).toEqual({
      cart: ['empty', 'full', 'paid'],
      door: ['shut', 'ajar'],
    });
  });
});
