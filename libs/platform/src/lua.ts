import { readFileSync } from 'node:fs';
import { join } from 'node:path';

/** Reads a Lua script that sits in a `lua/` folder beside the calling module. */
export function loadLua(dir: string, file: string): string {
  return readFileSync(join(dir, 'lua', file), 'utf8');
}
