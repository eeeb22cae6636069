// LuaScript (libs/platform): scripts go by EVALSHA and fall back to EVAL when the server does not know them.
// Runs against a redis-server of its own, because SCRIPT FLUSH would empty the shared server's script cache.
import { Redis } from 'ioredis';
import { LuaScript, loadLua } from '@countersign/platform';
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

  it('takes the number of keys from the file name', () => {
    const script = LuaScript.load(`${__dirname}/../libs/platform/src`, 'audit-append-2.lua');
    expect(script.numberOfKeys).toBe(2);
    expect(script.sha).toMatch(/^[0-9a-f]{40}$/);
    expect(() => LuaScript.load(`${__dirname}/../libs/platform/src`, 'audit-append.lua')).toThrow(
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
