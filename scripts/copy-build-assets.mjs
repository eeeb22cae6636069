#!/usr/bin/env node
// Build step after tsc: copies the files tsc does not emit (the Lua scripts and the snippets they include) into
// dist/, beside the compiled modules that read them, so `node dist/apps/<app>/src/main.js` finds them. Then
// resolves every copied script's includes with the compiled loader, so a missing include fails the build, not
// a service's start.
/* global process */
import { cpSync, mkdirSync, readdirSync } from 'node:fs';
import { createRequire } from 'node:module';
import { basename, dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const ASSET = /\.lua$/;

function* assets(dir) {
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) yield* assets(path);
    else if (ASSET.test(entry.name)) yield path;
  }
}

let copied = 0;
for (const top of ['apps', 'libs']) {
  for (const file of assets(join(root, top))) {
    const target = join(root, 'dist', relative(root, file));
    mkdirSync(dirname(target), { recursive: true });
    cpSync(file, target);
    copied++;
  }
}
process.stdout.write(`copied ${copied} build asset(s) into dist/\n`);

// A script is `lua/<command>-<numberOfKeys>.lua`; what sits in `lua/includes/` is only ever included.
const { LuaScript } = createRequire(import.meta.url)(join(root, 'dist', 'libs', 'platform', 'src', 'lua.js'));
let resolved = 0;
for (const top of ['apps', 'libs']) {
  for (const file of assets(join(root, 'dist', top))) {
    if (basename(dirname(file)) !== 'lua') continue;
    LuaScript.load(dirname(dirname(file)), basename(file));
    resolved++;
  }
}
process.stdout.write(`resolved the includes of ${resolved} Lua script(s) in dist/\n`);
