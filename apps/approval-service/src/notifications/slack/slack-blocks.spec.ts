import type { StoredApproval } from '../../requests/approval-types';
import { outcomeMessage, parseButtonValue, requestMessage, SlackAction } from './slack-blocks';

const approval = (
  over: Partial<StoredApproval> = {},
  reason: 'confirmation_required' | 'manual_step' = 'confirmation_required',
) => ({
  request: {
    requestId: 'rq-7',
    callId: 'call-7',
    runId: 'run-1',
    agent: 'ops',
    requester: 'alice',
    toolName: 'restart_service',
    toolDescription: '',
    args: { service: '<payments>' },
    tier: 'confirm' as const,
    fingerprint: 'a'.repeat(64),
    toolDefinitionHash: 'b'.repeat(64),
    reason,
    attempt: 2,
    requestedAt: new Date(0).toISOString(),
  },
  expiresAt: Date.UTC(2030, 0, 1),
  trustCount: 0,
  quorum: 1,
  status: 'pending' as const,
  votes: [],
  ...over,
});

const buttons = (blocks: Record<string, unknown>[]) =>
  blocks
    .filter((b) => b.type === 'actions')
    .flatMap((b) => b.elements as { action_id: string; value: string }[]);

describe('Slack blocks', () => {
  it('shows a request with Approve, Deny and Respond buttons carrying the request and attempt', () => {
    const { blocks } = requestMessage(approval());
    expect(buttons(blocks).map((b) => [b.action_id, parseButtonValue(b.value)])).toEqual([
      [SlackAction.Approve, { requestId: 'rq-7', attempt: 2, rev: 0 }],
      [SlackAction.Deny, { requestId: 'rq-7', attempt: 2, rev: 0 }],
      [SlackAction.Respond, { requestId: 'rq-7', attempt: 2, rev: 0 }],
    ]);
  });

  it('escapes arguments so they cannot inject Slack markup', () => {
    expect(JSON.stringify(requestMessage(approval()).blocks)).toContain('&lt;payments&gt;');
  });

  it('carries a trust suggestion after five consecutive approvals', () => {
    expect(JSON.stringify(requestMessage(approval({ trustCount: 4 })).blocks)).not.toContain(
      'consider a standing rule',
    );
    expect(JSON.stringify(requestMessage(approval({ trustCount: 5 })).blocks)).toContain(
      '5 approvals in a row of restart_service for alice: consider a standing rule',
    );
  });

  it('shows a manual-step notice without buttons', () => {
    const message = requestMessage(approval({}, 'manual_step'));
    expect(message.text).toContain('Manual step required');
    expect(buttons(message.blocks)).toEqual([]);
  });

  it.each([
    [
      {
        decision: 'approve' as const,
        decidedBy: 'person' as const,
        approvers: ['bob', 'carol'],
        decidedAt: '',
      },
      'Approved by bob, carol',
    ],
    [
      {
        decision: 'deny' as const,
        decidedBy: 'person' as const,
        approvers: ['bob'],
        reason: 'not now',
        decidedAt: '',
      },
      'Denied by bob: not now',
    ],
    [
      {
        decision: 'deny' as const,
        decidedBy: 'expired' as const,
        approvers: [],
        reason: 'expired',
        decidedAt: '',
      },
      'Denied: expired',
    ],
  ])('replaces the buttons with the outcome %#', (outcome, text) => {
    const message = outcomeMessage(approval({ status: 'decided', outcome }));
    expect(message.text).toContain(text);
    expect(buttons(message.blocks)).toEqual([]);
  });

  it('binds the buttons to the revision of edited arguments, and shows the edit', () => {
    const edited = { args: { service: 'web' }, fingerprint: 'c'.repeat(64), by: 'carol', at: '', rev: 2 };
    const { blocks } = requestMessage(approval({ edited }));
    expect(buttons(blocks).map((b) => parseButtonValue(b.value))).toEqual([
      { requestId: 'rq-7', attempt: 2, rev: 2 },
      { requestId: 'rq-7', attempt: 2, rev: 2 },
      { requestId: 'rq-7', attempt: 2, rev: 2 },
    ]);
    const text = JSON.stringify(blocks);
    expect(text).toContain('Edited by *carol*');
    expect(text).toContain('\\"service\\": \\"web\\"'); // the edited arguments are the ones shown
  });

  it('shows what the run is for, the tool, its preview, the route, the votes and the time left', () => {
    const context = JSON.stringify(
      requestMessage(
        approval({
          request: {
            ...approval().request,
            context: {
              input: 'scale for the sale',
              modelText: 'Scaling up.',
              preview: 'payments: 2 → 6 replicas',
            },
          },
          tool: {
            name: 'restart_service',
            description: 'Restarts a service.',
            tier: 'confirm',
            argsSchema: {},
          },
          route: { rule: 'payments', why: 'args.service "payments" matches "payments*"' },
          quorum: 2,
          votes: [{ approver: 'dave', decision: 'approve', channel: 'web', at: '', rev: 0 }],
        }),
        'https://cs.example/inbox',
      ).blocks,
    );
    for (const part of [
      'alice: “scale for the sale”',
      '“Scaling up.”',
      'restart_service (confirm): Restarts a service.',
      '*payments: 2 → 6 replicas*',
      'rule “payments”: args.service \\"payments\\" matches \\"payments*\\"',
      '1 of 2: dave approved',
      '*Expires*\\nin ',
      'https://cs.example/inbox',
    ])
      expect(context).toContain(part);
  });

  it.each(['call-1', 'call-1|x', 'a:b|1', 'call-1|1|x', ''])('refuses the button value %p', (value) => {
    expect(parseButtonValue(value)).toBeUndefined();
  });
});
