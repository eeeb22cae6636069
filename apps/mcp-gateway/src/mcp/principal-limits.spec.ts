import { Redis } from 'ioredis';
import pino from 'pino';
import { RateLimiter, redisRateLimitStorage } from '@countersign/platform';
import { PrincipalLimits } from './principal-limits';

describe('PrincipalLimits', () => {
  const policy = {
    keyPrefix: 'cstest-principal-limits',
    logger: pino({ level: 'silent' }),
    routes: {
      'mcp-session-open': {
        what: 'session opens',
        person: { limit: 1, windowMs: 60_000, text: '1/1m', setting: 'S' },
      },
      'mcp-tool-call': {
        what: 'tool calls',
        person: { limit: 1, windowMs: 60_000, text: '1/1m', setting: 'T' },
      },
    },
  };
  const alice = { id: 'alice', kind: 'person' as const };

  it('refuses (503) when Redis cannot count: a request is never let through unchecked', async () => {
    const offline = new Redis({ lazyConnect: true, enableOfflineQueue: false, maxRetriesPerRequest: 0 });
    try {
      const sut = new PrincipalLimits(
        new RateLimiter(policy, redisRateLimitStorage(offline)),
        { get: () => alice as never },
        policy.logger,
      );
      expect(await sut.check('alice', 'tool-call')).toEqual({
        status: 503,
        message: 'rate limits cannot be checked right now (Redis); try again shortly',
      });
    } finally {
      offline.disconnect();
    }
  });

  it('refuses (503) a principal the directory does not know, without counting', async () => {
    const offline = new Redis({ lazyConnect: true, enableOfflineQueue: false, maxRetriesPerRequest: 0 });
    try {
      const sut = new PrincipalLimits(
        new RateLimiter(policy, redisRateLimitStorage(offline)),
        { get: () => undefined },
        policy.logger,
      );
      expect(await sut.check('ghost', 'session-open')).toMatchObject({
        status: 503,
        message: expect.stringContaining('ghost'),
      });
    } finally {
      offline.disconnect();
    }
  });
});
