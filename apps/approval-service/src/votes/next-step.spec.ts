import type { ApprovalRequest } from '@countersign/contracts';
import { nextStep } from './next-step';

// What runs is said by the tool name the caller passes; the request is only carried along.
const request = () => ({ toolName: 'scale_service' }) as ApprovalRequest;

describe('nextStep', () => {
  it.each([
    [
      {
        status: 'vote_recorded' as const,
        callId: 'call-1',
        approvals: 1,
        quorum: 3,
        rev: 0,
        editedNow: false,
      },
      'Counted (1 of 3). The call runs once 2 more approvers approve it.',
    ],
    [
      {
        status: 'vote_recorded' as const,
        callId: 'call-1',
        approvals: 1,
        quorum: 2,
        rev: 1,
        editedNow: true,
      },
      'Your edit and approval are counted (1 of 2). The other approvers are asked about the edited call; it runs once 1 more approver approves it.',
    ],
  ])('after a vote that did not decide: %j', (result, text) => {
    expect(nextStep(result, 'scale_service', { decision: 'approve' })).toBe(text);
  });

  it('after a decision: what the agent does now', () => {
    const decided = (decision: 'approve' | 'deny' | 'respond', args?: Record<string, unknown>) => ({
      status: 'decided' as const,
      callId: 'call-1',
      request: request(),
      channels: [],
      outcome: {
        decision,
        decidedBy: 'person' as const,
        approvers: ['bob'],
        decidedAt: '',
        ...(args ? { args } : {}),
      },
    });
    expect(nextStep(decided('approve'), 'scale_service', { decision: 'approve' })).toBe(
      'Approved. The agent runs scale_service now, once; its result shows in History.',
    );
    expect(nextStep(decided('approve', { replicas: 4 }), 'scale_service', { decision: 'approve' })).toContain(
      'runs scale_service with the edited arguments now',
    );
    expect(nextStep(decided('deny'), 'scale_service', { decision: 'deny', reason: 'no' })).toBe(
      'Denied. The agent is told, with your reason, and does not run scale_service; it may try something else.',
    );
    expect(nextStep(decided('respond'), 'scale_service', { decision: 'respond' })).toBe(
      'Responded. scale_service does not run; the agent is given your response as its result, naming you, and re-plans.',
    );
  });
});
