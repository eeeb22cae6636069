import type { ApprovalRequest } from '@countersign/contracts';
import {
  contextLines,
  durationInWords,
  expiresInWords,
  outcomeInWords,
  quorumProgress,
} from './approval-context';
import type { StoredApproval, Vote } from './approval-types';
import { approvalRequest } from './__fixtures__/approval-request';

const NOW = Date.UTC(2030, 0, 1, 12);

const request = (over: Partial<ApprovalRequest> = {}): ApprovalRequest =>
  approvalRequest({
    toolName: 'scale_service',
    args: { service: 'payments', replicas: 6 },
    requestedAt: new Date(NOW).toISOString(),
    ...over,
  });

const vote = (approver: string, over: Partial<Vote> = {}): Vote => ({
  approver,
  decision: 'approve',
  channel: 'web',
  at: '',
  rev: 0,
  ...over,
});

const approval = (over: Partial<StoredApproval> = {}): StoredApproval => ({
  request: request(),
  status: 'pending',
  groups: ['finance'],
  quorum: 2,
  escalationGroups: [],
  routeVersion: 0,
  channels: ['web'],
  createdAt: NOW,
  expiresAt: NOW + 29 * 60_000 + 40_000,
  votes: [],
  setAside: [],
  trustCount: 0,
  published: false,
  slackMessages: [],
  emailed: [],
  ...over,
});

describe('contextLines', () => {
  it('shows the precondition the approval is for, and on a re-ask what the earlier approval was for', () => {
    const precondition = { value: { replicas: 9 }, digest: 'd'.repeat(64) };
    const first = contextLines(approval({ request: request({ precondition }) }), NOW);
    expect(first).toContainEqual({ label: 'Precondition', text: '{"replicas":9}' });
    const again = contextLines(
      approval({
        request: request({
          reason: 'precondition_changed',
          precondition: { ...precondition, previous: { replicas: 6 } },
        }),
      }),
      NOW,
    );
    expect(again).toContainEqual({
      label: 'Precondition',
      text: '{"replicas":9} (changed since the earlier approval, which was for {"replicas":6})',
    });
    expect(contextLines(approval(), NOW).map((l) => l.label)).not.toContain('Precondition');
  });

  it('says what the run is for, what the model said, the tool, its preview, the route, the votes and the time left', () => {
    const a = approval({
      request: request({
        context: {
          input: 'keep payments fast',
          modelText: 'Scaling up.',
          preview: 'payments: 2 → 6 replicas',
        },
      }),
      tool: {
        name: 'scale_service',
        description: 'Sets the number of replicas.',
        tier: 'confirm',
        argsSchema: {},
      },
      route: { rule: 'payments', why: 'args.service "payments" matches "payments*"' },
      votes: [vote('dave')],
    });
    expect(contextLines(a, NOW)).toEqual([
      { label: 'Run for', text: 'alice: “keep payments fast”' },
      { label: 'Model said', text: '“Scaling up.”' },
      { label: 'Tool', text: 'scale_service (confirm): Sets the number of replicas.' },
      { label: 'Preview', text: 'payments: 2 → 6 replicas', kind: 'preview' },
      { label: 'Routed by', text: 'rule “payments”: args.service "payments" matches "payments*"' },
      { label: 'Approvals', text: '1 of 2: dave approved' },
      { label: 'Expires', text: 'in 30 min' },
    ]);
  });

  it('leaves out what is not known, and the votes and time of a request no longer pending', () => {
    const lines = contextLines(
      approval({ status: 'decided', route: { rule: 'defaultGroup', why: 'no rule matched' } }),
      NOW,
    );
    expect(lines).toEqual([
      { label: 'Tool', text: 'scale_service (confirm)' },
      { label: 'Routed by', text: 'default group: no rule matched' },
    ]);
  });
});

describe('quorumProgress', () => {
  it.each([
    [1, [], 'none yet'],
    [2, [], 'none yet (needs 2)'],
    [1, [vote('bob')], 'bob approved'],
    [
      3,
      [vote('bob'), vote('carol', { edited: true, rev: 1 })],
      '2 of 3: bob approved, carol approved (edited)',
    ],
  ])('quorum %i with %j → %s', (quorum, votes, text) => {
    expect(quorumProgress({ quorum, votes })).toBe(text);
  });
});

describe('time in words', () => {
  it.each([
    [0, '0 s'],
    [44_400, '44 s'],
    [90_000, '2 min'],
    [59 * 60_000, '59 min'],
    [60 * 60_000, '1 h'],
    [135 * 60_000, '2 h 15 min'],
    [5 * 86_400_000, '5 d'],
  ])('%i ms → %s', (ms, text) => {
    expect(durationInWords(ms)).toBe(text);
  });

  it('says when a request expires, or how long ago it did', () => {
    expect(expiresInWords(NOW + 30_000, NOW)).toBe('in 30 s');
    expect(expiresInWords(NOW - 180_000, NOW)).toBe('expired 3 min ago');
  });
});

describe('outcomeInWords', () => {
  const decided = (outcome: StoredApproval['outcome'], over: Partial<StoredApproval> = {}) =>
    outcomeInWords(approval({ status: 'decided', outcome, ...over }));
  const base = { decidedAt: '', approvers: [] as string[] };

  it.each([
    [
      { ...base, decision: 'approve', decidedBy: 'person', approvers: ['bob', 'carol'] },
      'Approved by bob, carol',
    ],
    [
      { ...base, decision: 'deny', decidedBy: 'person', approvers: ['bob'], reason: 'not now' },
      'Denied by bob: not now',
    ],
    [
      { ...base, decision: 'deny', decidedBy: 'expired', reason: 'expired' },
      'Denied: expired (nobody decided in time)',
    ],
    [{ ...base, decision: 'deny', decidedBy: 'no_route' }, 'Denied: no approver route'],
    [
      {
        ...base,
        decision: 'approve',
        decidedBy: 'policy',
        rule: 'sr-1',
        reason: 'standing rule sr-1 (by carol, until x)',
      },
      'Approved by standing rule sr-1 (by carol)',
    ],
  ] as const)('%j → %s', (outcome, text) => {
    expect(decided({ ...outcome, approvers: [...outcome.approvers] })).toBe(text);
  });

  it('says who edited the arguments an approval ran with, and who did a manual step', () => {
    const edited = { args: { replicas: 4 }, fingerprint: 'c', by: 'carol', at: '', rev: 1 };
    expect(
      decided(
        {
          ...base,
          decision: 'approve',
          decidedBy: 'person',
          approvers: ['carol', 'dave'],
          args: edited.args,
        },
        { edited },
      ),
    ).toBe('Approved by carol, dave (arguments edited by carol)');
    expect(decided(undefined, { done: { by: 'bob', at: '', note: 'snapshot first' } })).toBe(
      'Manual step done by bob: snapshot first',
    );
  });
});
