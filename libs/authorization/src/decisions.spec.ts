import { DecisionBook, refusalMessage } from './decisions';

describe('DecisionBook', () => {
  const approve = { callId: 'call-1', decision: 'approve' as const, fingerprint: 'f'.repeat(64) };

  it('finds a decision by its call ID', () => {
    expect(new DecisionBook([approve]).get('call-1')).toBe(approve);
  });

  it('has no decision for an unknown call ID', () => {
    expect(new DecisionBook([approve]).get('call-2')).toBeUndefined();
  });

  it('lets a later decision for the same call replace the earlier one', () => {
    const deny = { ...approve, decision: 'deny' as const };
    expect(new DecisionBook([approve]).record(deny).get('call-1')).toBe(deny);
  });
});

describe('refusalMessage', () => {
  it.each([
    ['a person without reason', {}, 'Tool execution was denied by the user.'],
    [
      'a person with reason',
      { decidedBy: 'person' as const, reason: 'not now' },
      'Tool execution was denied by the user. Reason: not now',
    ],
    ['an expired request', { decidedBy: 'expired' as const }, expect.stringMatching(/expired/)],
    ['no route', { decidedBy: 'no_route' as const }, expect.stringMatching(/no approver/)],
    [
      'policy with reason',
      { decidedBy: 'policy' as const, reason: 'weekend' },
      'Tool execution was refused by policy: weekend',
    ],
    ['policy without reason', { decidedBy: 'policy' as const }, 'Tool execution was refused by policy.'],
  ])('tells the model about %s', (_case, decision, expected) => {
    expect(refusalMessage(decision)).toEqual(expected);
  });
});
