// The layering of src/ (docs/internals/architecture.md), checked on every import, type-only ones
// included (scripts/import-graph.mjs; `node scripts/import-graph.mjs --edges` prints the graph).
import { describe, expect, test } from 'vitest';
import { cycles, importsOfSrc, unitGraph } from '../../scripts/import-graph.mjs';

const edges = importsOfSrc();

/** What src/http/ (the request path's core) may never name: the capabilities, and what sits above it. */
const ABOVE_HTTP = [
  'webhooks',
  'stream',
  'validate',
  'stubs',
  'upstream',
  'record',
  'resources',
  'meters',
  'sessions',
  'fleet',
  'verify',
  'control',
  'workers',
];

/**
 * The imports that may close a cycle between top-level folders: none. The last one (the config
 * loader reading the OpenAPI description to check `openapi:`) went when the description's reader
 * moved below the config, to src/description/. An import that closes a cycle fails the test above.
 */
const KNOWN: string[] = [];

const key = (e: { from: string; to: string }) => `${e.from} -> ${e.to}`;

describe('import layers of src/', () => {
  test('src/http/ names no capability, nor the control plane or the workers hub (type imports included)', () => {
    const crossing = edges
      .filter((e) => e.from.startsWith('http/') && ABOVE_HTTP.includes(e.to.split('/')[0]!))
      .map(key);
    expect(crossing).toEqual([]);
  });

  test('no import cycle between top-level folders, but for the known imports', () => {
    const found = cycles(unitGraph(edges.filter((e) => !KNOWN.includes(key(e)))));
    expect(found).toEqual([]);
  });

  test('each known import still exists (one that is gone comes off the list)', () => {
    const present = new Set(edges.map(key));
    expect(KNOWN.filter((edge) => !present.has(edge))).toEqual([]);
  });

  test('the checker sees a cycle when there is one', () => {
    expect(cycles(unitGraph([...edges, { from: 'config/types.ts', to: 'control/journal.ts' }]))).not.toEqual([]);
  });
});
