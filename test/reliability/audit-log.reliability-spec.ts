// Found by the load scenario: a run stayed `running` forever with every call done, because its worker's
// audit append never resolved. An append made right as the previous batch finished was queued behind a
// flush that had already ended, and waited for a later append that a quiet system never makes.
import { Redis } from 'ioredis';
import { AuditLog } from '@countersign/audit';
import { testAuditKeyring } from '../support/audit';
import { deletePrefixedKeys, TEST_REDIS_URL, uniquePrefixes } from '../support/redis';
import { ScenarioTally } from './support/scenario-tally';

describe('audit log under sequential appends', () => {
  const prefixes = uniquePrefixes('audit-gap');
  const redis = new Redis(TEST_REDIS_URL);
  afterAll(async () => {
    redis.disconnect();
    await deletePrefixedKeys(prefixes);
  });

  it('resolves an append made the moment the previous one resolved', async () => {
    const tally = new ScenarioTally('audit append right after an append');
    const sut = new AuditLog(redis, prefixes.keyPrefix, 'reliability', testAuditKeyring());
    for (let i = 0; i < 20; i++) {
      tally.case();
      await sut.append({ type: 'tool.executed', callId: `first-${i}` });
      const next = sut.append({ type: 'tool.executed', callId: `next-${i}` }); // same tick as the resolve
      const appended = await Promise.race([
        next.then(() => true),
        new Promise<false>((resolve) => setTimeout(() => resolve(false), 2_000)),
      ]);
      if (appended) tally.completed++;
      else tally.lostRun(`append ${i} never resolved`);
    }
    tally.expectClean();
    expect((await sut.read()).length).toBe(2 * tally.tried);
  });
});
