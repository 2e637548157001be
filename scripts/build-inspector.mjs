#!/usr/bin/env node
// Builds the inspector page (SPEC §9) into one self-contained file, dist/inspector/inspector.html:
// src/inspector/page/main.ts bundled and minified by esbuild, style.css minified, both inlined into
// index.html. One file: the page needs no other request to paint, works offline, and the server can
// allow exactly its two inline blocks by hash in its Content-Security-Policy
// (src/inspector/page-asset.ts computes the hashes when it loads the file).
// Run by `npm run build`; prints the page's size and gzip size.
//
//   node scripts/build-inspector.mjs
import { mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { gzipSync } from 'node:zlib';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));
const SRC = `${root}src/inspector/page/`;
const OUT_DIR = `${root}dist/inspector/`;
const OUT = `${OUT_DIR}inspector.html`;
/** SPEC-level budget (issue 16): the page must stay under this many bytes gzipped. */
const GZIP_BUDGET = 150 * 1024;

const { build, transform } = await import('esbuild');
const script = await build({
  absWorkingDir: root,
  entryPoints: [`${SRC}main.ts`],
  bundle: true,
  write: false,
  format: 'iife',
  platform: 'browser',
  // Browsers of the last few years; nothing here needs more.
  target: ['chrome100', 'firefox100', 'safari15'],
  minify: true,
  legalComments: 'none',
  logLevel: 'warning',
});
const js = script.outputFiles[0].text.trim();
const css = (await transform(readFileSync(`${SRC}style.css`, 'utf8'), { loader: 'css', minify: true })).code.trim();
// The inline blocks must not end early; esbuild escapes `</script` inside strings, this checks it.
if (/<\/script/i.test(js) || /<\/style/i.test(css)) throw new Error('inspector: a closing tag inside an inline block');

const template = readFileSync(`${SRC}index.html`, 'utf8');
const html = template.replace('/*STYLE*/', () => css).replace('/*SCRIPT*/', () => js);
if (html === template || html.includes('/*STYLE*/') || html.includes('/*SCRIPT*/'))
  throw new Error('inspector: placeholders not found in index.html');

const gzipped = gzipSync(html, { level: 9 }).length;
if (gzipped > GZIP_BUDGET) throw new Error(`inspector: ${gzipped} bytes gzipped, over the ${GZIP_BUDGET}-byte budget`);
mkdirSync(OUT_DIR, { recursive: true });
const temp = `${OUT}.tmp-${process.pid}`;
writeFileSync(temp, html);
renameSync(temp, OUT);
process.stdout.write(
  `inspector: ${OUT.slice(root.length)} ${(Buffer.byteLength(html) / 1024).toFixed(1)} KiB, ${(gzipped / 1024).toFixed(1)} KiB gzipped\n`,
);
