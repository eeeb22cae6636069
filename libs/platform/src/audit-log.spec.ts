// The stored form of an audit entry is pinned: an entry written by an earlier version must hash the same today,
// or verify() would report every old chain as broken.
import { auditEntryJson, chainHash } from './audit-log';

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

describe('audit entry form', () => {
  it('writes an entry as RFC 8785 canonical JSON, byte for byte as before', () => {
    expect(auditEntryJson(ENTRY)).toBe(PINNED_JSON);
  });

  it('hashes an entry as before, first in its chain and after another entry', () => {
    expect(chainHash('', auditEntryJson(ENTRY))).toBe(
      'fa15b5d5eeb6a74e7346c904ee67bd4c60ef009224944d9192b2a2bdc7d6ebf1',
    );
    expect(chainHash('ab'.repeat(32), auditEntryJson(ENTRY))).toBe(
      '90baf77388dbbea99c6f6a021d27859613deacaad3820f3c276e3d4ebfcb35e5',
    );
  });
});
