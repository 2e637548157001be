// Loaded with `node --require` by bench/scenarios/openapi.js: at exit, writes the process's own
// resource usage (CPU times in µs, peak RSS in KiB) to the file MOCKAPI_BENCH_USAGE names.
const { writeFileSync } = require('node:fs');

const file = process.env.MOCKAPI_BENCH_USAGE;
if (file !== undefined) process.on('exit', () => writeFileSync(file, JSON.stringify(process.resourceUsage())));
