#!/usr/bin/env node
// Entry point of `npx countersign`: runs the compiled CLI from dist/, from any working directory. `npm ci` builds
// it (the `prepare` script runs `npm run build:cli`); after changing its sources, run `npm run build:cli` again.
'use strict';
const path = require('node:path');

const root = path.resolve(__dirname, '..');
const compiled = path.join(root, 'dist', 'apps', 'cli', 'src', 'main.js');

let cli;
try {
  cli = require(compiled);
} catch (error) {
  if (error && error.code === 'MODULE_NOT_FOUND' && String(error.message).includes(compiled)) {
    process.stderr.write(
      `countersign: the CLI is not built yet (no ${path.relative(root, compiled)}): run \`npm run build:cli\` in ${root}\n`,
    );
    process.exit(1);
  }
  throw error;
}

cli.main(process.argv).catch((error) => {
  process.stderr.write(`countersign: ${error instanceof Error ? error.message : String(error)}\n`);
  process.exitCode = 1;
});
