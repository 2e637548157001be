// The import graph of src/ by top-level folder, for the layering checks (test/unit/import-layers.test.ts).
// Run as a script to print it: `node scripts/import-graph.mjs`.
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve, sep } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const SRC = join(ROOT, 'src');
/** Left out: the inspector page is a browser bundle with its own tsconfig (it imports nothing of src/). */
const SKIP = [join(SRC, 'inspector', 'page')];
/** `import … from '…'`, `export … from '…'`, `import '…'` and `import('…')`, type-only ones included. */
const IMPORT = /(?:\bfrom\s*|\bimport\s*\(\s*|^\s*import\s+)['"](\.{1,2}\/[^'"]+)['"]/gm;

function sourceFiles(dir) {
  const out = [];
  for (const name of readdirSync(dir)) {
    const path = join(dir, name);
    if (SKIP.includes(path)) continue;
    if (statSync(path).isDirectory()) out.push(...sourceFiles(path));
    else if (name.endsWith('.ts') && !name.endsWith('.d.ts')) out.push(path);
  }
  return out;
}

/** The unit a file belongs to: its top-level folder under src/, or the file itself for one at src/'s top. */
export function unitOf(file) {
  const parts = relative(SRC, file).split(sep);
  return parts.length === 1 ? parts[0] : parts[0];
}

/** Every relative import of src/: `{ from, to }` as paths under src/ (`http/handler.ts`). */
export function importsOfSrc() {
  const edges = [];
  for (const file of sourceFiles(SRC)) {
    const text = readFileSync(file, 'utf8');
    for (const match of text.matchAll(IMPORT)) {
      const target = resolve(dirname(file), match[1]).replace(/\.js$/, '.ts');
      edges.push({ from: relative(SRC, file).split(sep).join('/'), to: relative(SRC, target).split(sep).join('/') });
    }
  }
  return edges;
}

/** The folder graph: unit → the units it imports (itself left out). */
export function unitGraph(edges = importsOfSrc()) {
  const graph = new Map();
  for (const { from, to } of edges) {
    const a = from.split('/')[0];
    const b = to.split('/')[0];
    if (!graph.has(a)) graph.set(a, new Set());
    if (!graph.has(b)) graph.set(b, new Set());
    if (a !== b) graph.get(a).add(b);
  }
  return graph;
}

/** The strongly connected components of more than one unit (Tarjan): each one is an import cycle between folders. */
export function cycles(graph = unitGraph()) {
  let index = 0;
  const stack = [];
  const info = new Map();
  const found = [];
  function visit(v) {
    info.set(v, { index, low: index, onStack: true });
    index++;
    stack.push(v);
    for (const w of graph.get(v) ?? []) {
      if (!info.has(w)) {
        visit(w);
        info.get(v).low = Math.min(info.get(v).low, info.get(w).low);
      } else if (info.get(w).onStack) info.get(v).low = Math.min(info.get(v).low, info.get(w).index);
    }
    if (info.get(v).low === info.get(v).index) {
      const component = [];
      let w;
      do {
        w = stack.pop();
        info.get(w).onStack = false;
        component.push(w);
      } while (w !== v);
      if (component.length > 1) found.push(component.sort());
    }
  }
  for (const v of [...graph.keys()].sort()) if (!info.has(v)) visit(v);
  return found;
}

/** The imports that make `a` and `b` depend on each other: every edge between the two. */
export function edgesBetween(units, edges = importsOfSrc()) {
  const set = new Set(units);
  return edges.filter(({ from, to }) => {
    const a = from.split('/')[0];
    const b = to.split('/')[0];
    return a !== b && set.has(a) && set.has(b);
  });
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const edges = importsOfSrc();
  const graph = unitGraph(edges);
  for (const [unit, deps] of [...graph].sort()) console.log(`${unit} → ${[...deps].sort().join(', ')}`);
  const found = cycles(graph);
  console.log(found.length === 0 ? '\nno cycles between top-level folders' : `\n${found.length} cycle(s):`);
  for (const c of found) {
    console.log(`  ${c.join(' ⇄ ')}`);
    if (process.argv.includes('--edges'))
      for (const e of edgesBetween(c, edges)) console.log(`    ${e.from} → ${e.to}`);
  }
}
