#!/usr/bin/env node
// The CLI bundled into one file (scripts/bundle.mjs) so that start-up loads one module, not ~100.
import { run } from '../dist/cli.bundle.js';

run(process.argv);
