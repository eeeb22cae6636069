// The throttler's counters in Redis, so every replica of a service counts the same requests. Keys carry the
// deployment's KEY_PREFIX (see RateLimiter), so deployments sharing a Redis never share counts. The counting script is
// @nest-lab/throttler-storage-redis's (same keys, same answers), run by EVALSHA: the library sends its 877-byte text
// with every EVAL, one per rate limit counted (issue 27).
import { ServiceUnavailableException } from '@nestjs/common';
import type { ThrottlerStorage } from '@nestjs/throttler';
import { Cluster, Redis } from 'ioredis';
import { LuaScript } from '../lua';
import type { RedisClient } from '../redis';

const HIT_SCRIPT = LuaScript.load(__dirname, 'rate-limit-hit-2.lua');

/**
 * Counts on `redis` (a single server or a Cluster: each counter's two keys share one hash tag). Throws at start-up
 * when `redis` is not an ioredis client (a second copy of ioredis would fail every count at run time).
 */
export function redisRateLimitStorage(redis: RedisClient): ThrottlerStorage {
  if (!(redis instanceof Redis) && !(redis instanceof Cluster))
    throw new Error(
      'the rate-limit storage did not take the service Redis client (an ioredis version mismatch?)',
    );
  return {
    async increment(key, ttl, limit, blockDuration, throttlerName) {
      let answer: unknown;
      try {
        answer = await HIT_SCRIPT.run(
          redis,
          [`{${key}:${throttlerName}}:hits`, `{${key}:${throttlerName}}:blocked`],
          [ttl, limit, blockDuration],
        );
      } catch (error) {
        // Fail closed: a request whose count cannot be checked is not let through.
        throw new ServiceUnavailableException(
          'rate limits cannot be checked right now (Redis); try again shortly',
          { cause: error },
        );
      }
      const [totalHits, timeToExpire, isBlocked, timeToBlockExpire] = counted(answer);
      return {
        totalHits,
        timeToExpire: Math.ceil(timeToExpire / 1000),
        isBlocked: isBlocked === 1,
        timeToBlockExpire: Math.ceil(timeToBlockExpire / 1000),
      };
    },
  };
}

/** The script's four integers; anything else is a broken script or server, and refuses the request (fail closed). */
function counted(answer: unknown): [number, number, number, number] {
  if (Array.isArray(answer) && answer.length === 4 && answer.every((value) => typeof value === 'number'))
    return answer as [number, number, number, number];
  throw new ServiceUnavailableException(
    'rate limits cannot be checked right now (an unexpected answer from Redis); try again shortly',
  );
}
