// The stored form of an audit entry and its link are pinned: an entry written by an earlier version must link the same
// today, or verify() would report every old chain as broken.
import { createHmac } from 'node:crypto';
import { auditEntryJson, chainId, chainKeyId } from './audit-entry';
import { AuditKey, AuditKeyring } from './audit-keyring';

// Keys out of order (and non-ASCII ones), numbers JSON writes in several ways, escapes, nesting, undefined fields.
const ENTRY = {
  type: 'tool.executed',
  runId: 'run-1',
  callId: 'call-1',
  sessionId: undefined,
  actor: 'alice',
  service: 'agent-worker',
  at: '2026-01-02T03:04:05.678Z',
  detail: {
    z: 1,
    a: [3, 'x', null, true],
    é: 'ünï ✓ 😀',
    '\u20ac': 1,
    '\ud83d\ude00': 2,
    n: 1e21,
    f: 0.1,
    small: 1e-7,
    neg: -0,
    ctrl: '\u001f\n"\\\u2028',
    gone: undefined,
    nested: { b: 2, a: { d: 1, c: 2 } },
  },
};

// Written by the policy library's canonicalJson, which audit-log.ts used before it called `canonicalize` itself.
const PINNED_JSON =
  '{"actor":"alice","at":"2026-01-02T03:04:05.678Z","callId":"call-1","detail":{"a":[3,"x",null,true],' +
  '"ctrl":"\\u001f\\n\\"\\\\\u2028","f":0.1,"n":1e+21,"neg":0,' +
  '"nested":{"a":{"c":2,"d":1},"b":2},"small":1e-7,"z":1,"é":"ünï ✓ 😀","€":1,"😀":2},' +
  '"runId":"run-1","service":"agent-worker","type":"tool.executed"}';

const SECRET = 'pinned-audit-signing-secret-0123456789';

describe('audit entry form', () => {
  it('writes an entry as RFC 8785 canonical JSON, byte for byte as before', () => {
    expect(auditEntryJson(ENTRY)).toBe(PINNED_JSON);
  });

  it('links an entry as before, first in its chain and after another entry', () => {
    const key = new AuditKey(SECRET);
    const chain = chainId('agent-worker', '0a1b2c3d', key.id);
    expect(key.id).toBe('0ea6a915');
    expect(key.entryMac(chain, '', auditEntryJson(ENTRY))).toBe(
      '28c1646628d609c78d0aa715183ffbb2929eb76290089e32f3006f33a740ebb5',
    );
    expect(key.entryMac(chain, 'ab'.repeat(32), auditEntryJson(ENTRY))).toBe(
      '754b3744732787264ecd27e78bbda55788c7b345f1535ad5d40425d387243394',
    );
  });

  it('links with HMAC-SHA256 under a key derived from the secret, over chain, previous link and entry', () => {
    const key = new AuditKey(SECRET);
    const derived = createHmac('sha256', SECRET).update('countersign audit entry v1').digest();
    const chain = chainId('svc', 'ffffffff', key.id);
    const expected = createHmac('sha256', derived)
      .update(`${chain}\n${'cd'.repeat(32)}\n${auditEntryJson(ENTRY)}`)
      .digest('hex');
    expect(key.entryMac(chain, 'cd'.repeat(32), auditEntryJson(ENTRY))).toBe(expected);
    // Another secret, another chain or another previous link: another link.
    expect(new AuditKey(`${SECRET}!`).entryMac(chain, 'cd'.repeat(32), auditEntryJson(ENTRY))).not.toBe(
      expected,
    );
    expect(key.entryMac(chainId('svc', 'fffffffe', key.id), 'cd'.repeat(32), auditEntryJson(ENTRY))).not.toBe(
      expected,
    );
    expect(key.entryMac(chain, 'ce'.repeat(32), auditEntryJson(ENTRY))).not.toBe(expected);
  });

  it('signs checkpoints with a key of their own, never valid as an entry link', () => {
    const key = new AuditKey(SECRET);
    expect(key.checkpointMac('{}')).not.toBe(createHmac('sha256', SECRET).update('{}').digest('hex'));
    expect(key.checkpointMac('{}')).toMatch(/^[0-9a-f]{64}$/);
  });
});

describe('chain IDs', () => {
  it('name their key', () => {
    expect(chainKeyId(chainId('approval-service', '0a1b2c3d', 'ffee0011'))).toBe('ffee0011');
  });

  it.each([
    ['a chain of the unkeyed log', 'approval-service:0a1b2c3d'],
    ['a key ID that is not 8 hex characters', 'approval-service:0a1b2c3d:xyz'],
    ['no service', ':0a1b2c3d:ffee0011'],
  ])('name no key for %s', (_, chain) => {
    expect(chainKeyId(chain)).toBeUndefined();
  });
});

describe('AuditKeyring', () => {
  it('signs with the current secret and verifies with previous ones too, each by its key ID', () => {
    const sut = new AuditKeyring(SECRET, [`old-${SECRET}`, SECRET]);
    const old = new AuditKey(`old-${SECRET}`);
    expect(sut.current.id).toBe(new AuditKey(SECRET).id);
    expect(sut.ids).toEqual([sut.current.id, old.id]);
    expect(sut.key(old.id)?.entryMac('c', '', '{}')).toBe(old.entryMac('c', '', '{}'));
    expect(sut.key('00000000')).toBeUndefined();
  });

  it('keeps nothing enumerable that would reveal a key in a log line', () => {
    const key = new AuditKey(SECRET);
    expect(Object.keys(key)).toEqual(['id']);
    expect(JSON.stringify(new AuditKeyring(SECRET))).not.toContain(SECRET);
  });
});
