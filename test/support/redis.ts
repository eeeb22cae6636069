// Test isolation on a shared Redis: every test file gets its own key and queue prefix and removes its keys.
import { randomBytes } from 'node:crypto';
import { Redis } from 'ioredis';

export const TEST_REDIS_URL = process.env.TEST_REDIS_URL ?? 'redis://127.0.0.1:6379';

export interface TestPrefixes {
  /** KEY_PREFIX for the services. */
  keyPrefix: string;
  /** QUEUE_PREFIX for the services (a Redis Cluster hash tag, as in production). */
  queuePrefix: string;
}

export function uniquePrefixes(label = 'test'): TestPrefixes {
  const id = `cstest-${label}-${randomBytes(4).toString('hex')}`;
  return { keyPrefix: id, queuePrefix: `{${id}}` };
}

/** Deletes every key the prefixes own. Never FLUSHALL: the server is shared. */
/** What every service's test environment starts with: the test Redis, the prefixes, no logs. */
export function redisEnv(prefixes: TestPrefixes): Record<string, string> {
  return {
    REDIS_URL: TEST_REDIS_URL,
    KEY_PREFIX: prefixes.keyPrefix,
    QUEUE_PREFIX: prefixes.queuePrefix,
    LOG_LEVEL: 'silent',
  };
}

export async function deletePrefixedKeys(prefixes: TestPrefixes, url = TEST_REDIS_URL): Promise<number> {
  const redis = new Redis(url);
  let deleted = 0;
  try {
    for (const pattern of [`*${prefixes.keyPrefix}*`]) {
      let cursor = '0';
      do {
        const [next, keys] = await redis.scan(cursor, 'MATCH', pattern, 'COUNT', 1000);
        cursor = next;
        if (keys.length) deleted += await redis.unlink(...keys);
      } while (cursor !== '0');
    }
  } finally {
    redis.disconnect();
  }
  return deleted;
}

/**
 * A fresh key prefix for each test that asks (`fresh()`), all of them deleted by `deleteAll()` (in afterAll): for
 * specs whose tests each want Redis state of their own.
 */
export function freshKeyPrefixes(label: string): { fresh(): string; deleteAll(): Promise<void> } {
  const used: TestPrefixes[] = [];
  return {
    fresh() {
      const prefixes = uniquePrefixes(label);
      used.push(prefixes);
      return prefixes.keyPrefix;
    },
    async deleteAll() {
      await Promise.all(used.map((prefixes) => deletePrefixedKeys(prefixes)));
    },
  };
}

/** Polls `probe` until it returns a truthy value (or throws after `timeoutMs`). For state, not for timing. */
export async function waitFor<T>(
  probe: () => Promise<T> | T,
  what: string,
  timeoutMs = 15_000,
  everyMs = 25,
): Promise<NonNullable<T>> {
  const deadline = Date.now() + timeoutMs;
  let last: unknown;
  for (;;) {
    try {
      const value = await probe();
      if (value) return value as NonNullable<T>;
    } catch (error) {
      last = error;
    }
    if (Date.now() > deadline)
      throw new Error(`timed out waiting for ${what}${last ? `: ${String(last)}` : ''}`);
    await new Promise((r) => setTimeout(r, everyMs));
  }
}
