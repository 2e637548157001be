/** The parts of an endpoint a suggestion needs. */
export interface EndpointRef {
  method: string;
  path: string;
}

/**
 * Most cost per unit of pattern weight (literal segments count 1, `:param` segments ½) for a path to
 * be suggested: about a two-letter typo in a five-letter word, or one missing `:param`.
 */
const MAX_PATH_COST = 0.4;
/** Added to the score of an endpoint with another method, so the same method wins a near tie. */
const OTHER_METHOD_PENALTY = 0.15;
/** Cost of a configured `:param` segment the request lacks (a literal one costs 1). */
const MISSING_PARAM_COST = 0.5;
/** Cost of a request segment no pattern segment accounts for. */
const EXTRA_SEGMENT_COST = 0.5;
/** Requests with more segments, or literal segments longer than this, are not compared closely. */
const MAX_SEGMENTS = 32;
const MAX_SEGMENT_LENGTH = 48;
const RESULT_CACHE_SIZE = 512;

interface Pattern<E> {
  endpoint: E;
  method: string;
  /** Per segment before a trailing `*`: the interned literal's id, or -1 for a `:param`. */
  literals: Int32Array;
  wildcard: boolean;
  /** What a cost is divided by: literal segments count 1, params ½ (they match anything). */
  weight: number;
}

interface Index<E> {
  size: number;
  /** Distinct literal segments of all patterns; patterns refer to them by position. */
  vocabulary: string[];
  /** Patterns without a wildcard, by segment count. */
  byCount: Map<number, Pattern<E>[]>;
  wildcards: Pattern<E>[];
  results: Map<string, E | null>;
}

const indexes = new WeakMap<ReadonlyArray<EndpointRef>, Index<EndpointRef>>();

/**
 * The configured endpoint closest to a request that matched none, for a 404 log line ("did you
 * mean GET /users/:id?"), or undefined when nothing is reasonably close.
 *
 * Paths are compared segment by segment: a `:param` segment matches any segment, a trailing `*`
 * matches the rest, literal segments score by edit distance (with transpositions) relative to their
 * length (beyond 40% they count as unrelated), a missing literal segment costs 1 and a missing
 * `:param` or an extra request segment ½. The cost is divided by the pattern's weight (literal
 * segments 1, params ½, since params match anything and are weak evidence of closeness) and must not
 * exceed 0.4. Only patterns with a segment count within one of the request's are looked at. The same
 * method is preferred (HEAD counts as GET), but the right path under another method is still
 * suggested. Ties go to the endpoint listed first.
 *
 * `endpoints` is indexed once and the index is cached for that array (rebuilt if its length
 * changes), so pass the compiled config's array rather than a fresh copy per request. Results for
 * the last few hundred distinct requests are cached too.
 */
export function closestEndpoint<E extends EndpointRef>(
  method: string,
  path: string,
  endpoints: ReadonlyArray<E>,
): E | undefined {
  const index = indexFor(endpoints);
  const cacheKey = method + ' ' + path;
  const cached = index.results.get(cacheKey);
  if (cached !== undefined) return cached ?? undefined;

  const result = search(method.toUpperCase(), splitPath(path), index);
  if (index.results.size >= RESULT_CACHE_SIZE) index.results.clear();
  index.results.set(cacheKey, result ?? null);
  return result;
}

/** The 404 log note for a request, e.g. `did you mean GET /users/:id?`, or undefined. */
export function suggestionNote(
  method: string,
  path: string,
  endpoints: ReadonlyArray<EndpointRef>,
): string | undefined {
  const best = closestEndpoint(method, path, endpoints);
  return best && `did you mean ${best.method.toUpperCase()} ${best.path}?`;
}

/** Scratch state of one search, reused across searches (they never overlap: all synchronous). */
const scratch = {
  request: [] as string[],
  vocabulary: [] as string[],
  /** literal-vs-request-segment costs, valid where `stamps` holds the current generation. */
  costs: new Float64Array(0),
  stamps: new Uint32Array(0),
  generation: 0,
  /** Segment-level DP table: request rows ≤ MAX_SEGMENTS + 1, pattern columns ≤ MAX_SEGMENTS + 2. */
  table: new Float64Array((MAX_SEGMENTS + 1) * (MAX_SEGMENTS + 2)),
};

function search<E>(method: string, request: string[], index: Index<E>): E | undefined {
  if (request.length > MAX_SEGMENTS) return undefined;
  prepareScratch(request, index.vocabulary);
  const methodAlias = method === 'HEAD' ? 'GET' : method;
  let best: E | undefined;
  let bestScore = Infinity;

  const consider = (pattern: Pattern<E>): void => {
    const sameMethod = pattern.method === method || pattern.method === methodAlias;
    const penalty = sameMethod ? 0 : OTHER_METHOD_PENALTY;
    const limit = Math.min(MAX_PATH_COST + EPSILON, bestScore - penalty) * pattern.weight;
    if (limit < 0) return;
    const cost = pathCost(pattern, limit) / pattern.weight;
    if (cost > MAX_PATH_COST + EPSILON) return;
    const score = cost + penalty;
    if (score < bestScore) {
      bestScore = score;
      best = pattern.endpoint;
    }
  };

  for (let count = request.length - 1; count <= request.length + 1; count++) {
    const patterns = index.byCount.get(count);
    if (patterns) for (const pattern of patterns) consider(pattern);
  }
  for (const pattern of index.wildcards) {
    if (pattern.literals.length <= request.length + 1) consider(pattern);
  }
  return best;
}

const EPSILON = 1e-9;

function prepareScratch(request: string[], vocabulary: string[]): void {
  const cells = vocabulary.length * Math.max(1, request.length);
  if (scratch.costs.length < cells) {
    scratch.costs = new Float64Array(cells);
    scratch.stamps = new Uint32Array(cells);
    scratch.generation = 0;
  }
  scratch.generation = (scratch.generation + 1) >>> 0;
  if (scratch.generation === 0) {
    scratch.stamps.fill(0);
    scratch.generation = 1;
  }
  scratch.request = request;
  scratch.vocabulary = vocabulary;
}

/**
 * Segment-level edit distance between the request and a pattern, or something above `limit` once
 * it is certain to exceed it. A wildcard pattern lets `*` absorb any trailing request segments for
 * free, so its cost is the best over the last column.
 */
function pathCost<E>(pattern: Pattern<E>, limit: number): number {
  const { table, request } = scratch;
  const literals = pattern.literals;
  const rows = request.length + 1;
  const cols = literals.length + 1;
  // Every cell is written before it is read, so the shared table needs no clearing.
  table[0] = 0;
  for (let j = 1; j < cols; j++) table[j] = table[j - 1]! + (literals[j - 1]! < 0 ? MISSING_PARAM_COST : 1);
  let wildcardCost = table[cols - 1]!;
  for (let i = 1; i < rows; i++) {
    const row = i * cols;
    let rowMin = (table[row] = i * EXTRA_SEGMENT_COST);
    for (let j = 1; j < cols; j++) {
      const literal = literals[j - 1]!;
      const substitute = literal < 0 ? 0 : literalCost(i - 1, literal);
      const skip = literal < 0 ? MISSING_PARAM_COST : 1;
      const cell = Math.min(
        table[row - cols + j - 1]! + substitute,
        table[row - cols + j]! + EXTRA_SEGMENT_COST,
        table[row + j - 1]! + skip,
      );
      table[row + j] = cell;
      if (cell < rowMin) rowMin = cell;
    }
    wildcardCost = Math.min(wildcardCost, table[row + cols - 1]!);
    // Row minima never decrease, so no later row can come back under the limit.
    if (rowMin > limit) return pattern.wildcard ? wildcardCost : Infinity;
  }
  return pattern.wildcard ? wildcardCost : table[rows * cols - 1]!;
}

/** Normalised edit distance (0 = same, 1 = unrelated) of request segment `at` and a literal, memoised. */
function literalCost(at: number, literal: number): number {
  const slot = literal * scratch.request.length + at;
  if (scratch.stamps[slot] === scratch.generation) return scratch.costs[slot]!;
  const segment = scratch.request[at]!;
  const text = scratch.vocabulary[literal]!;
  const longest = Math.max(segment.length, text.length);
  let cost: number;
  if (segment === text) cost = 0;
  else if (longest > MAX_SEGMENT_LENGTH) cost = 1;
  else {
    // More than 40% of the letters wrong is not a typo: such segments count as unrelated, which
    // also bounds the edit distance so most comparisons stop early.
    const limit = Math.floor(longest * MAX_PATH_COST);
    const distance = Math.abs(segment.length - text.length) > limit ? limit + 1 : editDistance(segment, text, limit);
    cost = distance > limit ? 1 : distance / longest;
  }
  scratch.costs[slot] = cost;
  scratch.stamps[slot] = scratch.generation;
  return cost;
}

const rowA = new Uint16Array(MAX_SEGMENT_LENGTH + 1);
const rowB = new Uint16Array(MAX_SEGMENT_LENGTH + 1);
const rowC = new Uint16Array(MAX_SEGMENT_LENGTH + 1);

/**
 * Optimal-string-alignment distance (Levenshtein plus adjacent transpositions) with three reused
 * rows; returns limit + 1 as soon as two consecutive rows exceed `limit` (no later row can be lower).
 */
function editDistance(a: string, b: string, limit: number): number {
  let before = rowA;
  let previous = rowB;
  let current = rowC;
  for (let j = 0; j <= b.length; j++) previous[j] = j;
  let previousMin = 0;
  for (let i = 1; i <= a.length; i++) {
    current[0] = i;
    let rowMin = i;
    const ca = a.charCodeAt(i - 1);
    for (let j = 1; j <= b.length; j++) {
      const cb = b.charCodeAt(j - 1);
      let d = Math.min((previous[j] ?? 0) + 1, (current[j - 1] ?? 0) + 1, (previous[j - 1] ?? 0) + (ca === cb ? 0 : 1));
      if (i > 1 && j > 1 && ca === b.charCodeAt(j - 2) && a.charCodeAt(i - 2) === cb) {
        d = Math.min(d, (before[j - 2] ?? 0) + 1);
      }
      current[j] = d;
      if (d < rowMin) rowMin = d;
    }
    if (rowMin > limit && previousMin > limit) return limit + 1;
    previousMin = rowMin;
    const spare = before;
    before = previous;
    previous = current;
    current = spare;
  }
  return previous[b.length] ?? 0;
}

function splitPath(path: string): string[] {
  return path.split('/').filter((segment) => segment !== '');
}

function indexFor<E extends EndpointRef>(endpoints: ReadonlyArray<E>): Index<E> {
  const cached = indexes.get(endpoints) as Index<E> | undefined;
  if (cached && cached.size === endpoints.length) return cached;
  const index: Index<E> = {
    size: endpoints.length,
    vocabulary: [],
    byCount: new Map(),
    wildcards: [],
    results: new Map(),
  };
  const ids = new Map<string, number>();
  for (const endpoint of endpoints) {
    const segments = splitPath(endpoint.path);
    const wildcard = segments[segments.length - 1] === '*';
    if (wildcard) segments.pop();
    const literals = new Int32Array(segments.length);
    let params = 0;
    segments.forEach((segment, i) => {
      // A parameter, whole (`:id`) or sharing its segment with text (`:sid.json`); `::` is a literal `:`.
      if (/(^|[^:])(::)*:[A-Za-z_]/.test(segment)) {
        literals[i] = -1;
        params++;
        return;
      }
      let id = ids.get(segment);
      if (id === undefined) {
        id = index.vocabulary.push(segment) - 1;
        ids.set(segment, id);
      }
      literals[i] = id;
    });
    const pattern: Pattern<E> = {
      endpoint,
      method: endpoint.method.toUpperCase(),
      literals,
      wildcard,
      weight: Math.max(1, segments.length - params / 2),
    };
    if (wildcard) index.wildcards.push(pattern);
    else {
      const bucket = index.byCount.get(segments.length);
      if (bucket) bucket.push(pattern);
      else index.byCount.set(segments.length, [pattern]);
    }
  }
  indexes.set(endpoints, index as Index<EndpointRef>);
  return index;
}
