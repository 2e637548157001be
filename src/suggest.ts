/** The parts of an endpoint a suggestion needs. */
export interface EndpointRef {
  method: string;
  path: string;
}

/**
 * A path's normalised cost must not exceed this share of its segments to be suggested: about one
 * typo in a short word per segment, or one missing/extra segment in three.
 */
const MAX_PATH_COST = 0.4;
/** Added to the score of an endpoint with another method, so the same method wins a near tie. */
const OTHER_METHOD_PENALTY = 0.15;
/** Cost of a configured `:param` segment the request lacks (a literal one costs 1). */
const MISSING_PARAM_COST = 0.5;
/** Requests with more segments, or literal segments longer than this, are not compared closely. */
const MAX_SEGMENTS = 32;
const MAX_SEGMENT_LENGTH = 48;
const RESULT_CACHE_SIZE = 512;

interface Pattern<E> {
  endpoint: E;
  method: string;
  /** Segments before a trailing `*`, or all of them. */
  segments: string[];
  isParam: boolean[];
  wildcard: boolean;
}

interface Index<E> {
  size: number;
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
 * length, and a missing or extra segment costs a whole segment (half for a missing `:param`). Only
 * patterns with a segment count within one of the request's are looked at. The same method is
 * preferred (HEAD counts as GET), but an endpoint with the right path and another method is still
 * suggested. Ties go to the endpoint listed first.
 *
 * `endpoints` is indexed once and the index is cached for that array, so pass the compiled config's
 * array (which never changes) rather than a fresh copy per request.
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

function search<E>(method: string, request: string[], index: Index<E>): E | undefined {
  if (request.length > MAX_SEGMENTS) return undefined;
  const methodAlias = method === 'HEAD' ? 'GET' : method;
  const literalCosts = request.map(() => new Map<string, number>());
  let best: E | undefined;
  let bestScore = Infinity;

  const consider = (pattern: Pattern<E>): void => {
    const total = pattern.segments.length + (pattern.wildcard ? 1 : 0);
    const cost = pathCost(request, pattern, literalCosts) / Math.max(request.length, total, 1);
    if (cost > MAX_PATH_COST) return;
    const sameMethod = pattern.method === method || pattern.method === methodAlias;
    const score = cost + (sameMethod ? 0 : OTHER_METHOD_PENALTY);
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
    if (pattern.segments.length <= request.length + 1) consider(pattern);
  }
  return best;
}

/** Request segments ≤ MAX_SEGMENTS; candidate patterns have at most one segment more. */
const costTable = new Float64Array((MAX_SEGMENTS + 1) * (MAX_SEGMENTS + 2));

/**
 * Segment-level edit distance between the request and a pattern. A wildcard pattern lets `*` absorb
 * any trailing request segments for free, so its cost is the best over the last column.
 */
function pathCost<E>(request: string[], pattern: Pattern<E>, literalCosts: Map<string, number>[]): number {
  const rows = request.length + 1;
  const cols = pattern.segments.length + 1;
  // Every cell is written before it is read, so the shared table needs no clearing.
  const table = costTable;
  for (let i = 1; i < rows; i++) table[i * cols] = i;
  for (let j = 1; j < cols; j++) {
    table[j] = (table[j - 1] ?? 0) + (pattern.isParam[j - 1] ? MISSING_PARAM_COST : 1);
  }
  for (let i = 1; i < rows; i++) {
    for (let j = 1; j < cols; j++) {
      const isParam = pattern.isParam[j - 1] === true;
      const substitute = isParam ? 0 : literalCost(request, i - 1, pattern.segments[j - 1] ?? '', literalCosts);
      table[i * cols + j] = Math.min(
        (table[(i - 1) * cols + j - 1] ?? 0) + substitute,
        (table[(i - 1) * cols + j] ?? 0) + 1,
        (table[i * cols + j - 1] ?? 0) + (isParam ? MISSING_PARAM_COST : 1),
      );
    }
  }
  if (!pattern.wildcard) return table[rows * cols - 1] ?? 0;
  let cost = Infinity;
  for (let i = 0; i < rows; i++) cost = Math.min(cost, table[i * cols + cols - 1] ?? Infinity);
  return cost;
}

/** Normalised edit distance (0 = same, 1 = unrelated) of a request segment and a literal, memoised. */
function literalCost(request: string[], at: number, literal: string, memo: Map<string, number>[]): number {
  const seen = memo[at]?.get(literal);
  if (seen !== undefined) return seen;
  const segment = request[at] ?? '';
  const longest = Math.max(segment.length, literal.length);
  let cost: number;
  if (segment === literal) cost = 0;
  else if (longest > MAX_SEGMENT_LENGTH) cost = 1;
  else cost = Math.min(1, editDistance(segment, literal) / longest);
  memo[at]?.set(literal, cost);
  return cost;
}

const rowA = new Uint16Array(MAX_SEGMENT_LENGTH + 1);
const rowB = new Uint16Array(MAX_SEGMENT_LENGTH + 1);
const rowC = new Uint16Array(MAX_SEGMENT_LENGTH + 1);

/** Optimal-string-alignment distance (Levenshtein plus adjacent transpositions), three rows reused. */
function editDistance(a: string, b: string): number {
  let before = rowA;
  let previous = rowB;
  let current = rowC;
  for (let j = 0; j <= b.length; j++) previous[j] = j;
  for (let i = 1; i <= a.length; i++) {
    current[0] = i;
    const ca = a.charCodeAt(i - 1);
    for (let j = 1; j <= b.length; j++) {
      const cb = b.charCodeAt(j - 1);
      let d = Math.min((previous[j] ?? 0) + 1, (current[j - 1] ?? 0) + 1, (previous[j - 1] ?? 0) + (ca === cb ? 0 : 1));
      if (i > 1 && j > 1 && ca === b.charCodeAt(j - 2) && a.charCodeAt(i - 2) === cb) {
        d = Math.min(d, (before[j - 2] ?? 0) + 1);
      }
      current[j] = d;
    }
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
  const index: Index<E> = { size: endpoints.length, byCount: new Map(), wildcards: [], results: new Map() };
  for (const endpoint of endpoints) {
    const segments = splitPath(endpoint.path);
    const wildcard = segments[segments.length - 1] === '*';
    if (wildcard) segments.pop();
    const pattern: Pattern<E> = {
      endpoint,
      method: endpoint.method.toUpperCase(),
      segments,
      isParam: segments.map((segment) => segment.startsWith(':')),
      wildcard,
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
