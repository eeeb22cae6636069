// The vote that decided a request is audited (decision.recorded, then decision.published) and counted into trust
// once the decision is on the queue, in one append; when the decision job's add fails, they still go out.
import type { AuditInput } from '@countersign/audit';
import type { ApprovalRequest } from '@countersign/contracts';
import type { Logger } from '@countersign/platform';
import type { AuditTrail } from '../core/audit-trail';
import { FollowUps } from '../core/follow-ups';
import type { Metrics } from '../core/metrics';
import type { NotificationScheduler } from '../notifications/notification-scheduler';
import type { Outcome } from '../requests/approval-types';
import type { LiveUpdates } from '../requests/live-updates';
import type { RequestStore } from '../requests/request-store';
import type { DecisionPublisher } from './decision-publisher';
import type { DecisionStore } from './decision-store';
import { Settlement } from './settlement';

const request = {
  requestId: 'r1',
  callId: 'c1',
  runId: 'run-1',
  attempt: 1,
  toolName: 'restart_service',
  args: { service: 'api' },
  requestedAt: '2026-12-04T07:00:00.000Z',
} as unknown as ApprovalRequest;
const outcome: Outcome = {
  decision: 'approve',
  decidedBy: 'person',
  approvers: ['bob'],
  decidedAt: '2026-12-04T07:00:01.000Z',
};
const recorded: AuditInput = { type: 'decision.recorded', callId: 'c1', runId: 'run-1', actor: 'bob' };

function setup(publish: () => Promise<unknown>) {
  const steps: string[] = [];
  const logger = {
    info: () => undefined,
    error: () => undefined,
    warn: () => undefined,
  } as unknown as Logger;
  const metric = { inc: () => undefined, observe: () => undefined };
  const sut = new Settlement(
    { publish: async () => (steps.push('add'), publish()) } as unknown as DecisionPublisher,
    {
      countTrust: async () => void steps.push('trust'),
      markPublished: async () => undefined,
    } as unknown as DecisionStore,
    {} as RequestStore,
    { showOutcome: async () => undefined } as unknown as NotificationScheduler,
    { record: (entry: AuditInput) => void steps.push(`audit ${entry.type}`) } as unknown as AuditTrail,
    { announce: async () => undefined } as unknown as LiveUpdates,
    { decisionsPublished: metric, timeToDecision: metric } as unknown as Metrics,
    new FollowUps(logger),
    logger,
  );
  return { sut, steps };
}

describe('Settlement.settle with the vote that decided', () => {
  it('audits the vote and counts trust after the add, the vote before decision.published', async () => {
    const { sut, steps } = setup(async () => ({ fingerprint: 'f' }));
    await sut.settle(request, outcome, [], { recorded });
    expect(steps).toEqual(['add', 'audit decision.recorded', 'trust', 'audit decision.published']);
  });

  it('still audits the vote and counts trust when the add fails, and fails', async () => {
    const { sut, steps } = setup(async () => {
      throw new Error('add failed');
    });
    await expect(sut.settle(request, outcome, [], { recorded })).rejects.toThrow('add failed');
    expect(steps).toEqual(['add', 'audit decision.recorded', 'trust']);
  });

  it('audits no vote and counts no trust for a decision nobody voted (expiry, rule)', async () => {
    const { sut, steps } = setup(async () => ({ fingerprint: 'f' }));
    await sut.settle(request, { ...outcome, decidedBy: 'expired', approvers: [] }, []);
    expect(steps).toEqual(['add', 'audit decision.published']);
  });
});
