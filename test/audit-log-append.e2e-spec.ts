// Regression: an append made by a caller the moment its previous append resolved used to be stranded
// in the batch queue (the finishing flush had already seen it empty), hanging that run forever.
import { Redis } from 'ioredis';
import { AuditLog } from '@countersign/platform';
import { deletePrefixedKeys, TEST_REDIS_URL, uniquePrefixes } from './support/redis';

describe('AuditLog batching (real Redis)', () => {
  const prefixes = uniquePrefixes('audit-append');
  let redis: Redis;

  beforeAll(() => {
    redis = new Redis(TEST_REDIS_URL);
  });
  afterAll(async () => {
    redis.disconnect();
    await deletePrefixedKeys(prefixes);
  });

  it('writes an entry appended right after the previous one resolved', async () => {
    const sut = new AuditLog(redis, prefixes.keyPrefix, 'svc');
    for (let n = 0; n < 20; n++)
      await sut.append({ type: 'tool.executed', runId: 'run-1', callId: `c-${n}` });
    expect(await sut.read({ runId: 'run-1' })).toHaveLength(20);
  }, 10_000);
});
