import { readCheckpoint, signCheckpoint } from './audit-checkpoint';
import { AuditKeyring } from './audit-keyring';

const SECRET = 'checkpoint-spec-audit-secret-0123456789';
const CHECKPOINT = {
  v: 1 as const,
  upTo: '1700000000000-3',
  at: '2026-01-02T03:04:05.678Z',
  trimmed: 42,
  chains: { 'agent-worker:0a1b2c3d:ffee0011': 'ab'.repeat(32) },
};

describe('retention checkpoint', () => {
  const keyring = new AuditKeyring(SECRET);

  it('reads back what it signed, naming the key', () => {
    const stored = signCheckpoint(CHECKPOINT, keyring.current);
    expect(readCheckpoint(stored, keyring)).toEqual({
      ok: true,
      checkpoint: { ...CHECKPOINT, key: keyring.current.id },
    });
  });

  it('verifies a checkpoint signed with a previous secret while that secret is configured', () => {
    const stored = signCheckpoint(CHECKPOINT, new AuditKeyring(`old-${SECRET}`).current);
    expect(readCheckpoint(stored, new AuditKeyring(SECRET, [`old-${SECRET}`]))).toMatchObject({ ok: true });
    expect(readCheckpoint(stored, keyring)).toEqual({
      ok: false,
      reason: expect.stringMatching(/signed with key [0-9a-f]{8}, which is not configured/),
    });
  });

  const forged: [string, (stored: Record<string, unknown>) => unknown][] = [
    ['a later upTo', (c) => ({ ...c, upTo: '1800000000000-0' })],
    [
      'another link for a chain',
      (c) => ({ ...c, chains: { 'agent-worker:0a1b2c3d:ffee0011': 'cd'.repeat(32) } }),
    ],
    ['a chain left out', (c) => ({ ...c, chains: {} })],
    [
      'a chain added',
      (c) => ({ ...c, chains: { ...(c.chains as object), 'x:00000000:ffee0011': 'ef'.repeat(32) } }),
    ],
    ['a signature of another secret', (c) => ({ ...c, mac: 'f'.repeat(64) })],
  ];
  it.each(forged)('refuses %s', (_, change) => {
    const stored = JSON.parse(signCheckpoint(CHECKPOINT, keyring.current)) as Record<string, unknown>;
    expect(readCheckpoint(JSON.stringify(change(stored)), keyring)).toEqual({
      ok: false,
      reason: 'the retention checkpoint does not match its signature: it was changed or forged',
    });
  });

  it.each([
    ['not JSON', 'nope', 'the retention checkpoint is not JSON'],
    ['another shape', '{"upTo":"1-0"}', 'the retention checkpoint is not one this service writes'],
  ])('refuses a value that is %s', (_, stored, reason) => {
    expect(readCheckpoint(stored, keyring)).toEqual({ ok: false, reason });
  });
});
