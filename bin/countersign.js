#!/usr/bin/env node
// Entry point of `npx countersign`: runs the TypeScript CLI from source, from any working directory.
'use strict';
const path = require('node:path');

const root = path.resolve(__dirname, '..');
const project = path.join(root, 'tsconfig.json');

require('ts-node').register({ transpileOnly: true, project, dir: root });
const tsconfigPaths = require('tsconfig-paths');
const config = tsconfigPaths.loadConfig(root);
if (config.resultType !== 'success') throw new Error(`cannot read ${project}: ${config.message}`);
tsconfigPaths.register({ baseUrl: config.absoluteBaseUrl, paths: config.paths });

require(path.join(root, 'apps/cli/src/main.ts'))
  .main(process.argv)
  .catch((error) => {
    process.stderr.write(`countersign: ${error instanceof Error ? error.message : String(error)}\n`);
    process.exitCode = 1;
  });
