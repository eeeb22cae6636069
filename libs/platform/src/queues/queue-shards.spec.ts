import keySlot from 'cluster-key-slot';
import { queueShardOf, queueShardPrefix, queueShardPrefixes } from './queue-shards';

describe('queueShardOf', () => {
  it('puts every key on shard 0 when there is one shard', () => {
    expect(['a', 'run-1', ''].map((key) => queueShardOf(key, 1))).toEqual([0, 0, 0]);
  });

  it('gives a key the same shard every time, in range', () => {
    for (let i = 0; i < 200; i++) {
      const shard = queueShardOf(`run-${i}`, 3);
      expect(shard).toBe(queueShardOf(`run-${i}`, 3));
      expect(shard).toBeGreaterThanOrEqual(0);
      expect(shard).toBeLessThan(3);
    }
  });

  it('is the first 4 bytes of the SHA-256 modulo the shard count (stable across releases)', () => {
    // sha256("run-1") starts 0x4e65d3fb: pinned, so a change of hash (which strands queued jobs) is a visible break.
    expect(queueShardOf('run-1', 3)).toBe(0x4e65d3fb % 3);
  });

  it('spreads run IDs about evenly over the shards', () => {
    const counts = [0, 0, 0];
    for (let i = 0; i < 3_000; i++) counts[queueShardOf(`run-${i}`, 3)]++;
    for (const count of counts) expect(count).toBeGreaterThan(850);
  });
});

describe('queueShardPrefix', () => {
  it('keeps the configured prefix when there is one shard', () => {
    expect(queueShardPrefix('{countersign}', 0, 1)).toBe('{countersign}');
  });

  it('puts a suffix inside the hash tag, keeping what is around it', () => {
    expect(queueShardPrefix('{countersign}', 1, 3)).toMatch(/^\{countersign:s1(\.\d+)?\}$/);
    expect(queueShardPrefix('bull{q}x', 2, 3)).toMatch(/^bull\{q:s2(\.\d+)?\}x$/);
  });

  it('appends the shard to a prefix without a hash tag', () => {
    expect(queueShardPrefix('plain', 1, 3)).toBe('plain:s1');
    expect(queueShardPrefix('{}', 1, 3)).toBe('{}:s1');
  });

  it.each([2, 3, 4, 6])('places %i shards one in each equal run of slots', (shards) => {
    for (const prefix of ['{countersign}', '{cstest-load-0a1b2c3d}']) {
      const slots = queueShardPrefixes(prefix, shards).map((p) => keySlot(`${p}:agent-runs:wait`));
      const runs = slots.map((slot) => Math.floor((slot * shards) / 16_384));
      expect(runs).toEqual(Array.from({ length: shards }, (_, i) => i));
    }
  });

  it('gives distinct prefixes, the same on every call', () => {
    const prefixes = queueShardPrefixes('{countersign}', 4);
    expect(new Set(prefixes).size).toBe(4);
    expect(queueShardPrefixes('{countersign}', 4)).toEqual(prefixes);
  });
});
