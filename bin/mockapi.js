#!/usr/bin/env node
// The CLI bundled into one file and compiled from V8's code cache (scripts/bundle.mjs, src/cli/load-cli.ts).
import { loadCli } from '../dist/cli/load-cli.js';

loadCli().run(process.argv);
