// LuaScript (libs/platform): scripts go by EVALSHA and fall back to EVAL when the server does not know them.
// Runs against a redis-server of its own, because SCRIPT FLUSH would empty the shared server's script cache.
// Also: every script of the repository resolves its includes and compiles on Redis, and an error raised in an
// included snippet names the file and line it was written at.
import { mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, dirname, join, relative } from 'node:path';
import { Redis } from 'ioredis';
import { LuaScript, loadLua, readLuaSource } from '@countersign/platform';
import { OwnRedisServer } from './reliability/support/redis-servers';

describe('LuaScript (real Redis)', () => {
  let server: OwnRedisServer;
  let redis: Redis;
  const sut = new LuaScript(
    "redis.call('SET', KEYS[1], ARGV[1]) return {redis.call('GET', KEYS[1]), #KEYS, #ARGV}",
    1,
    'set-and-get-1',
  );

  beforeAll(async () => {
    server = await OwnRedisServer.start();
    redis = new Redis(server.url);
  });
  afterAll(async () => {
    await redis?.quit();
    await server?.stop();
  });

  const calls = async () => {
    const stats = await redis.info('commandstats');
    const count = (command: string) =>
      Number(new RegExp(`cmdstat_${command}:calls=(\\d+)`).exec(stats)?.[1] ?? 0);
    return { eval: count('eval'), evalsha: count('evalsha') };
  };

  it('sends the script text once, then only its SHA', async () => {
    await redis.config('RESETSTAT');
    expect(await sut.run(redis, ['k'], ['a'])).toEqual(['a', 1, 1]);
    expect(await sut.run(redis, ['k'], ['b'])).toEqual(['b', 1, 1]);
    expect(await sut.run(redis, ['k'], [3])).toEqual(['3', 1, 1]);
    // The first EVALSHA misses (NOSCRIPT) and is answered by one EVAL; every later call is one EVALSHA.
    expect(await calls()).toEqual({ eval: 1, evalsha: 3 });
  });

  it('loads the script again after SCRIPT FLUSH', async () => {
    await sut.run(redis, ['k'], ['before']);
    await redis.script('FLUSH');
    expect(await redis.script('EXISTS', sut.sha)).toEqual([0]);

    expect(await sut.run(redis, ['k'], ['after'])).toEqual(['after', 1, 1]);
    expect(await redis.script('EXISTS', sut.sha)).toEqual([1]);
  });

  it('passes errors other than NOSCRIPT through', async () => {
    const failing = new LuaScript("return redis.error_reply('BOOM it failed')", 0, 'failing-0');
    await expect(failing.run(redis, [], [])).rejects.toThrow('BOOM it failed');
  });

  it('refuses a call with the wrong number of keys', async () => {
    await expect(sut.run(redis, [], ['a'])).rejects.toThrow('set-and-get-1 takes 1 keys, got 0');
  });

  describe('errors in scripts with includes', () => {
    let dir: string;
    let script: LuaScript;
    beforeAll(() => {
      dir = mkdtempSync(join(tmpdir(), 'lua-errors-'));
      mkdirSync(join(dir, 'lua', 'includes'), { recursive: true });
      writeFileSync(
        join(dir, 'lua', 'fails-0.lua'),
        [
          '--[[ ARGV[1] "include" | "script" ]]',
          '--- @include "includes/fail"',
          "if ARGV[1] == 'include' then return fail() end",
          'return nil + 2',
        ].join('\n'),
      );
      writeFileSync(
        join(dir, 'lua', 'includes', 'fail.lua'),
        '-- Fails on purpose.\nlocal function fail()\n  return nil + 1\nend\n',
      );
      script = LuaScript.load(dir, 'fails-0.lua');
    });
    afterAll(() => rmSync(dir, { recursive: true, force: true }));

    it('names the include and its line when the error is raised in the include', async () => {
      // Redis counts lines of the resolved script (user_script:4); the message says where that line was written.
      await expect(script.run(redis, [], ['include'])).rejects.toThrow(
        /user_script:4: attempt to perform arithmetic on a nil value.* \(fails-0: includes\/fail\.lua:3\)$/,
      );
    });

    it("names the script's own line when the error is raised there", async () => {
      await expect(script.run(redis, [], ['script'])).rejects.toThrow(
        /user_script:7: attempt to perform arithmetic on a nil value.* \(fails-0: fails-0\.lua:4\)$/,
      );
    });
  });

  describe('the scripts of this repository', () => {
    const root = join(__dirname, '..');
    const luaFiles = (dir: string): string[] =>
      readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
        const path = join(dir, entry.name);
        if (entry.isDirectory()) return entry.name === 'node_modules' ? [] : luaFiles(path);
        return entry.name.endsWith('.lua') ? [path] : [];
      });
    const all = [...luaFiles(join(root, 'apps')), ...luaFiles(join(root, 'libs'))];
    const scripts = all.filter((path) => basename(dirname(path)) === 'lua');
    const includes = all.filter((path) => basename(dirname(path)) === 'includes');

    it('are all found (the list below is not empty)', () => {
      expect(scripts.length).toBeGreaterThanOrEqual(19);
      expect(includes.length).toBeGreaterThan(0);
    });

    it.each(scripts.map((path) => [relative(root, path), path]))(
      '%s resolves its includes and compiles on Redis under its SHA',
      async (_name, path) => {
        const script = LuaScript.load(dirname(dirname(path)), basename(path));
        // No directive is left (a comment may still name one, as the call ledger's header does).
        expect(script.source).not.toMatch(/^-{2,3}[ \t]*@include/m);
        expect(await redis.script('LOAD', script.source)).toBe(script.sha);
      },
    );

    it('include every file of an includes/ folder somewhere', () => {
      // The test-only scripts of test/support/lua count as users too (the call ledger's own spec runs one).
      const users = [...scripts, ...luaFiles(join(root, 'test', 'support', 'lua'))];
      const used = new Set(
        users.flatMap((path) =>
          readLuaSource(dirname(dirname(path)), basename(path)).origins.map((o) => o.path),
        ),
      );
      expect(includes.filter((path) => !used.has(path)).map((path) => relative(root, path))).toEqual([]);
    });
  });

  it('takes the number of keys from the file name', () => {
    const script = LuaScript.load(`${__dirname}/../libs/audit/src`, 'audit-append-2.lua');
    expect(script.numberOfKeys).toBe(2);
    expect(script.sha).toMatch(/^[0-9a-f]{40}$/);
    expect(() => LuaScript.load(`${__dirname}/../libs/audit/src`, 'audit-append.lua')).toThrow(
      '<command>-<numberOfKeys>.lua',
    );
  });

  it('puts the file an `--- @include "<file>"` line names in its place', () => {
    const dir = `${__dirname}/../apps/agent-worker/src/runs`;
    const script = LuaScript.load(dir, 'append-events-1.lua');
    expect(script.source).not.toMatch(/^--- @include/m);
    expect(script.source).toContain(loadLua(dir, 'includes/append-events.lua'));
    expect(script.source.indexOf('local function appendEvents')).toBeLessThan(
      script.source.indexOf('return appendEvents('),
    );
  });
});
