import { createHash } from 'node:crypto';
import { basename } from 'node:path';
import { type LuaOrigin, type LuaSource, readLuaSource } from './lua-source';
import type { RedisClient } from './redis';

/** Reads a Lua script that sits in a `lua/` folder beside the calling module, with its includes inlined. */
export function loadLua(dir: string, file: string): string {
  return readLuaSource(dir, file).text;
}

type LuaArg = string | number | Buffer;

/** A field of a script's encoded argument: what cjson gives back as a Lua string, number, boolean or table. */
export type ScriptArgValue =
  string | number | boolean | undefined | ScriptArgValue[] | { [name: string]: ScriptArgValue };

/**
 * The one argument of a script that takes many: a JSON object, read by `cjson.decode(ARGV[1])`, so a script
 * names its arguments instead of counting them. A field left undefined is absent (nil in Lua). Refused: null
 * (cjson's null is a truthy userdata, easily taken for a value), and numbers other than safe integers (JSON
 * writes NaN as null; Redis writes a Lua number into a key with %.17g, which agrees with how JavaScript wrote
 * the number as an argument of its own only for integers). A lone UTF-16 surrogate becomes U+FFFD, as it did
 * when strings went to Redis as arguments of their own; cjson would refuse the escape JSON writes for it.
 */
export function encodeScriptArgs<T extends { [name: string]: ScriptArgValue }>(args: T): string {
  return JSON.stringify(args, (name: string, value: unknown) => {
    if (value === null) throw new TypeError(`script argument "${name}" is null; leave it out instead`);
    if (typeof value === 'number' && !Number.isSafeInteger(value))
      throw new TypeError(`script argument "${name}" is ${value}, not a safe integer`);
    if (typeof value === 'string') return value.replace(/\p{Surrogate}/gu, '\uFFFD');
    return value;
  });
}

/**
 * A Lua script run by EVALSHA, so a call sends the script's SHA1 instead of its text. When the server does
 * not know the script (first use, a restart, SCRIPT FLUSH, another node of a cluster), the call is repeated
 * once with EVAL, which also caches it there. Works with a single Redis and a Redis Cluster alike; stateless,
 * so one instance can serve every connection.
 */
export class LuaScript {
  /** The script as Redis runs it (includes inlined). */
  readonly source: string;
  /** SHA1 of `source`. */
  readonly sha: string;
  private readonly origins?: LuaOrigin[];

  constructor(
    source: string | LuaSource,
    readonly numberOfKeys: number,
    /** For error messages. */
    readonly name = 'lua script',
  ) {
    this.source = typeof source === 'string' ? source : source.text;
    this.origins = typeof source === 'string' ? undefined : source.origins;
    this.sha = createHash('sha1').update(this.source).digest('hex');
  }

  /**
   * Loads `lua/<name>-<numberOfKeys>.lua` beside the calling module (the BullMQ naming convention), with its
   * `--- @include "includes/<name>"` lines resolved (see readLuaSource); the number of keys is taken from the
   * file name.
   */
  static load(dir: string, file: string): LuaScript {
    const keys = /-(\d+)\.lua$/.exec(file);
    if (!keys) throw new Error(`Lua script "${file}" must be named <command>-<numberOfKeys>.lua`);
    return new LuaScript(readLuaSource(dir, file), Number(keys[1]), basename(file, '.lua'));
  }

  /** Runs the script; `keys` must have exactly `numberOfKeys` entries (all of one hash tag on a cluster). */
  async run(redis: RedisClient, keys: string[], args: LuaArg[]): Promise<unknown> {
    if (keys.length !== this.numberOfKeys)
      throw new Error(`${this.name} takes ${this.numberOfKeys} keys, got ${keys.length}`);
    try {
      try {
        return await redis.evalsha(this.sha, this.numberOfKeys, ...keys, ...args);
      } catch (error) {
        if (!isNoScript(error)) throw error;
        return await redis.eval(this.source, this.numberOfKeys, ...keys, ...args);
      }
    } catch (error) {
      throw this.located(error);
    }
  }

  /**
   * Redis names a failing line of the resolved script (`user_script:<n>`), which is not a line of any file once
   * includes are inlined: the error's message gets the file and line it was written at.
   */
  private located(error: unknown): unknown {
    if (!this.origins || !(error instanceof Error)) return error;
    const line = /user_script:(\d+)/.exec(error.message);
    const origin = line ? this.origins[Number(line[1]) - 1] : undefined;
    if (origin) error.message += ` (${this.name}: ${origin.file}:${origin.line})`;
    return error;
  }
}

function isNoScript(error: unknown): boolean {
  return error instanceof Error && error.message.startsWith('NOSCRIPT');
}
