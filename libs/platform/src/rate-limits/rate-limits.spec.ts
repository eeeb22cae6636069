import { ServiceUnavailableException } from '@nestjs/common';
import { Cluster, Redis } from 'ioredis';
import { z } from 'zod';
import { rateLimitSetting, TrustProxySchema } from './rate-limit.schema';
import { redisRateLimitStorage } from './rate-limit-storage';
import { rateLimitPolicy } from './rate-limiter';
import { createLogger } from '../logger';

describe('rate-limit settings', () => {
  const schema = z.object({ LIMIT: rateLimitSetting('30/1m'), TRUST_PROXY: TrustProxySchema.optional() });
  const parse = (env: Record<string, string>) => schema.safeParse(env);

  it.each([
    ['30/1m', { limit: 30, windowMs: 60_000 }],
    ['5/10s', { limit: 5, windowMs: 10_000 }],
    ['1000/1h', { limit: 1000, windowMs: 3_600_000 }],
    ['2/1500ms', { limit: 2, windowMs: 1_500 }],
  ])('reads %s', (text, expected) => {
    expect(parse({ LIMIT: text }).data?.LIMIT).toEqual({ ...expected, text });
  });

  it('applies the default as if it had been set', () => {
    expect(parse({}).data?.LIMIT).toEqual({ limit: 30, windowMs: 60_000, text: '30/1m' });
  });

  it('turns a limit off only when it says off', () => {
    expect(parse({ LIMIT: 'off' }).data).toEqual({ LIMIT: undefined });
  });

  it.each([
    ['0/1m', 'at least 1 request'],
    ['5/500ms', 'at least 1s'],
    ['30 per minute', 'such as 30/1m'],
    ['30/m', 'such as 30/1m'],
    ['none', 'or off'],
    ['-1/1m', 'or off'],
  ])('refuses %s, naming the variable', (text, message) => {
    const issues = parse({ LIMIT: text }).error?.issues ?? [];
    expect(issues.map((i) => i.path.join('.'))).toEqual(['LIMIT']);
    expect(issues[0].message).toContain(message);
  });

  it.each([
    ['1', 1],
    ['loopback', ['loopback']],
    ['loopback, 10.0.0.0/8', ['loopback', '10.0.0.0/8']],
  ])('reads TRUST_PROXY=%s', (text, expected) => {
    expect(parse({ TRUST_PROXY: text }).data?.TRUST_PROXY).toEqual(expected);
  });

  it.each(['true', 'TRUE', '*', 'all', 'loopback,,'])(
    'refuses TRUST_PROXY=%s (every client could pick its address)',
    (text) => {
      expect(parse({ TRUST_PROXY: text }).error?.issues.map((i) => i.path.join('.'))).toEqual([
        'TRUST_PROXY',
      ]);
    },
  );
});

describe('redisRateLimitStorage', () => {
  it('counts on the client it is given: a single Redis or a Cluster', async () => {
    const redis = new Redis({ lazyConnect: true });
    const cluster = new Cluster([{ host: '127.0.0.1', port: 7000 }], { lazyConnect: true });
    try {
      expect(() => redisRateLimitStorage(redis)).not.toThrow();
      expect(() => redisRateLimitStorage(cluster)).not.toThrow();
    } finally {
      redis.disconnect();
      cluster.disconnect();
    }
  });

  it('refuses anything that is not an ioredis client instead of connecting somewhere else', () => {
    const lookalike = { call: () => Promise.resolve([1, 1, 0, 0]) };
    expect(() => redisRateLimitStorage(lookalike as never)).toThrow(/did not take the service Redis client/);
  });

  it('counts to the limit, then blocks, sending the script by its SHA1 (EVALSHA), not its text', async () => {
    const redis = new Redis({ host: '127.0.0.1', port: 6379 });
    const key = `rate-limit-spec-${process.pid}-${Date.now()}`;
    const sent: string[] = [];
    const send = redis.sendCommand.bind(redis);
    jest.spyOn(redis, 'sendCommand').mockImplementation((command, stream) => {
      sent.push(command.name.toLowerCase());
      return send(command, stream);
    });
    try {
      const storage = redisRateLimitStorage(redis);
      const hits = [];
      for (let i = 0; i < 4; i++) hits.push(await storage.increment(key, 60_000, 3, 30_000, 'principal'));
      expect(hits.map((h) => [h.totalHits, h.isBlocked])).toEqual([
        [1, false],
        [2, false],
        [3, false],
        [4, true],
      ]);
      expect(hits[0].timeToExpire).toBe(60);
      expect(hits[3].timeToBlockExpire).toBe(30);
      // The first count may meet a server that does not know the script yet (NOSCRIPT, then EVAL); none after it.
      expect(sent.slice(-3)).toEqual(['evalsha', 'evalsha', 'evalsha']);
      expect(sent.filter((name) => name === 'eval').length).toBeLessThanOrEqual(1);
    } finally {
      await redis.del(`{${key}:principal}:hits`, `{${key}:principal}:blocked`);
      redis.disconnect();
    }
  });

  it('refuses the request (503) when the count cannot be read: it fails closed', async () => {
    const offline = new Redis({ lazyConnect: true, enableOfflineQueue: false, maxRetriesPerRequest: 0 });
    try {
      const storage = redisRateLimitStorage(offline);
      await expect(storage.increment('k', 60_000, 5, 60_000, 'principal')).rejects.toBeInstanceOf(
        ServiceUnavailableException,
      );
    } finally {
      offline.disconnect();
    }
  });
});

describe('rateLimitPolicy', () => {
  it("names each limit after the variable that set it, leaves an `off` one out, and keeps the env's KEY_PREFIX", () => {
    const env = z
      .object({
        KEY_PREFIX: z.string(),
        RATE_LIMIT_A: rateLimitSetting('30/1m'),
        RATE_LIMIT_B: rateLimitSetting('off'),
      })
      .parse({ KEY_PREFIX: 'p:' });
    const policy = rateLimitPolicy(env, createLogger('test', 'silent'), (named) => ({
      things: { what: 'things', person: named('RATE_LIMIT_A'), address: named('RATE_LIMIT_B') },
    }));
    expect(policy.keyPrefix).toBe('p:');
    expect(policy.routes).toEqual({
      things: {
        what: 'things',
        person: { limit: 30, windowMs: 60_000, text: '30/1m', setting: 'RATE_LIMIT_A' },
        address: undefined,
      },
    });
  });
});
