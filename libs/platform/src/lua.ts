import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { basename, join } from 'node:path';
import type { RedisClient } from './redis';

/**
 * Reads a Lua script that sits in a `lua/` folder beside the calling module. A line `--- @include "<file>"`
 * (BullMQ's notation) is replaced by that file of the same folder, so scripts share a function without copies.
 */
export function loadLua(dir: string, file: string): string {
  return readFileSync(join(dir, 'lua', file), 'utf8').replace(
    /^--- @include "([^"]+)"$/gm,
    (_line, name: string) => readFileSync(join(dir, 'lua', name), 'utf8'),
  );
}

type LuaArg = string | number | Buffer;

/**
 * A Lua script run by EVALSHA, so a call sends the script's SHA1 instead of its text. When the server does
 * not know the script (first use, a restart, SCRIPT FLUSH, another node of a cluster), the call is repeated
 * once with EVAL, which also caches it there. Works with a single Redis and a Redis Cluster alike; stateless,
 * so one instance can serve every connection.
 */
export class LuaScript {
  readonly sha: string;

  constructor(
    readonly source: string,
    readonly numberOfKeys: number,
    /** For error messages. */
    readonly name = 'lua script',
  ) {
    this.sha = createHash('sha1').update(source).digest('hex');
  }

  /**
   * Loads `lua/<name>-<numberOfKeys>.lua` beside the calling module (the BullMQ naming convention);
   * the number of keys is taken from the file name.
   */
  static load(dir: string, file: string): LuaScript {
    const keys = /-(\d+)\.lua$/.exec(file);
    if (!keys) throw new Error(`Lua script "${file}" must be named <command>-<numberOfKeys>.lua`);
    return new LuaScript(loadLua(dir, file), Number(keys[1]), basename(file, '.lua'));
  }

  /** Runs the script; `keys` must have exactly `numberOfKeys` entries (all of one hash tag on a cluster). */
  async run(redis: RedisClient, keys: string[], args: LuaArg[]): Promise<unknown> {
    if (keys.length !== this.numberOfKeys)
      throw new Error(`${this.name} takes ${this.numberOfKeys} keys, got ${keys.length}`);
    try {
      return await redis.evalsha(this.sha, this.numberOfKeys, ...keys, ...args);
    } catch (error) {
      if (!isNoScript(error)) throw error;
      return redis.eval(this.source, this.numberOfKeys, ...keys, ...args);
    }
  }
}

function isNoScript(error: unknown): boolean {
  return error instanceof Error && error.message.startsWith('NOSCRIPT');
}
