import { mayDecide, maySee, type Decider, type Revision } from './deciders';

const revision = (over: Partial<Revision> = {}): Revision => ({
  toolName: 'scale_service',
  requester: 'alice',
  groups: ['ops'],
  quorum: 1,
  voters: [],
  ...over,
});
const person = (id: string, groups: string[] = ['ops']): Decider => ({ kind: 'person', id, groups });
const rule = (author = 'carol'): Decider => ({ kind: 'standing_rule', author });

describe('mayDecide', () => {
  it.each<[string, Decider, Revision, string | undefined]>([
    ['a member of a routed group', person('bob'), revision(), undefined],
    [
      'a member of an escalation group the request escalated to',
      person('frank', ['leads']),
      revision({ groups: ['ops', 'leads'] }),
      undefined,
    ],
    ['the requester, even in the group', person('alice'), revision(), 'self_approval'],
    [
      'the client that submitted the call',
      person('ops-bot'),
      revision({ submittedBy: 'ops-bot' }),
      'self_approval',
    ],
    ['someone in none of the groups', person('dave', ['finance']), revision(), 'not_in_group'],
    [
      'a member of the groups the request left',
      person('bob'),
      revision({ groups: ['finance'] }),
      'not_in_group',
    ],
    [
      'an approver who voted on this revision',
      person('bob'),
      revision({ quorum: 2, voters: ['bob'] }),
      'already_voted',
    ],
    ['a rule on a route of one approver', rule(), revision(), undefined],
    ['a rule of the requester', rule('alice'), revision(), 'self_approval'],
    ['a rule on a route of two approvers', rule(), revision({ quorum: 2 }), 'needs_people'],
    ['a rule on a runbook gate', rule(), revision({ toolName: 'runbook_gate' }), 'human_checkpoint'],
  ])('%s', (_who, decider, rev, refusal) => {
    const verdict = mayDecide(decider, rev);
    expect(verdict.allowed ? undefined : verdict.refusal).toBe(refusal);
  });
});

describe('maySee', () => {
  const approval = {
    groups: ['finance'],
    votes: [{ approver: 'dave', decision: 'approve' as const, channel: 'api' as const, at: '', rev: 1 }],
    setAside: [{ approver: 'carol', decision: 'approve' as const, channel: 'api' as const, at: '', rev: 0 }],
    edited: { args: {}, fingerprint: 'f', by: 'bob', at: '', rev: 1 },
  };
  it.each([
    ['a member of its groups', 'erin', ['finance'], true],
    ['who voted on it', 'dave', [], true],
    ['who voted on an earlier revision', 'carol', ['ops'], true],
    ['who edited it', 'bob', ['ops'], true],
    ['anyone else', 'mallory', ['ops'], false],
  ])('%s → %s', (_who, id, groups, seen) => {
    expect(maySee({ id, groups }, approval)).toBe(seen);
  });
});
