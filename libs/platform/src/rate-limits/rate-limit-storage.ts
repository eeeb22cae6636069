// The throttler's counters in Redis (@nest-lab/throttler-storage-redis), so every replica of a service counts the
// same requests. Keys carry the deployment's KEY_PREFIX (see RateLimiter), so deployments sharing a Redis
// never share counts.
import { ServiceUnavailableException } from '@nestjs/common';
import { ThrottlerStorageRedisService } from '@nest-lab/throttler-storage-redis';
import type { ThrottlerStorage } from '@nestjs/throttler';
import type { RedisClient } from '../redis';

/**
 * Counts on `redis` (a single server or a Cluster: each counter's two keys share one hash tag). Throws at start-up
 * if the library would not use that client: it takes any other value for connection options and would quietly
 * connect to localhost instead.
 */
export function redisRateLimitStorage(redis: RedisClient): ThrottlerStorage {
  const storage = new ThrottlerStorageRedisService(redis as never);
  if (storage.redis !== redis) {
    storage.redis.disconnect();
    throw new Error(
      'the rate-limit storage did not take the service Redis client (an ioredis version mismatch?)',
    );
  }
  return {
    async increment(key, ttl, limit, blockDuration, throttlerName) {
      try {
        return await storage.increment(key, ttl, limit, blockDuration, throttlerName);
      } catch (error) {
        // Fail closed: a request whose count cannot be checked is not let through.
        throw new ServiceUnavailableException(
          'rate limits cannot be checked right now (Redis); try again shortly',
          {
            cause: error,
          },
        );
      }
    },
  };
}
