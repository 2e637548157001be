import { failureDraw } from '../pipeline/failure.js';
import type { CompiledMove, CompiledResource } from './compile.js';

/**
 * Lifecycle moves: which move an object in a status takes next and when (the earliest of the moves
 * from its status whose `when` holds, counted from when it entered the status), and where a move
 * with weights goes — drawn from the seed, the collection, the object and the move, so a run with
 * the same seed moves the same objects the same way.
 */

type Obj = Record<string, unknown>;

/** The next move of `object` and when it is due, or undefined when none applies. */
export function nextMove(
  resource: CompiledResource,
  object: Obj,
  since: number,
): { move: CompiledMove; due: number } | undefined {
  let best: { move: CompiledMove; due: number } | undefined;
  for (const move of resource.moves) {
    const status = object[move.field];
    if (status !== move.from || (move.when !== undefined && !move.when(object))) continue;
    const due = since + move.afterMs;
    if (best === undefined || due < best.due) best = { move, due };
  }
  return best;
}

/** Whether any move of the collection could ever apply (so a write needs a schedule). */
export function hasMoves(resource: CompiledResource): boolean {
  return resource.moves.length > 0;
}

/** Where a move goes: its status, or one of its weighted statuses drawn for this object. */
export function moveTarget(move: CompiledMove, seed: number, collection: string, id: string): string {
  if (typeof move.to === 'string') return move.to;
  const total = move.to.reduce((sum, [, weight]) => sum + weight, 0);
  // A pure function of (seed, collection, object, move): whatever else was drawn before.
  let point = failureDraw(seed, `lifecycle\u0000${collection}\u0000${id}\u0000${move.index}`, 0) * total;
  for (const [status, weight] of move.to) {
    if (point < weight) return status;
    point -= weight;
  }
  return (move.to[move.to.length - 1] as readonly [string, number])[0];
}
