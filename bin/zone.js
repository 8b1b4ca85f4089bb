#!/usr/bin/env node
// The `zone` command runs the TypeScript sources directly through tsx, so a fresh
// `npm ci` is all it takes: no build step stands between a clone and `npx zone`.
require('tsx/cjs/api').register();
require('../src/cli/main.ts');
