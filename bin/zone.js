#!/usr/bin/env node
// The `zone` command runs the TypeScript sources directly through tsx, so a fresh
// `npm ci` is all it takes: no build step stands between a clone and `npx zone`.
// The entry point is unconditional: npm runs this file through a link named `zone`
// (node_modules/.bin/zone, or the npx cache's), so checking process.argv[1] would miss it.
require('tsx/cjs/api').register();
const { main } = require('../src/cli/main.ts');

main(process.argv.slice(2)).then(
  (code) => {
    process.exitCode = code;
  },
  (error) => {
    process.stderr.write(`zone: ${error instanceof Error ? error.stack ?? error.message : String(error)}\n`);
    process.exitCode = 1;
  },
);
