// Prometheus metrics of an approval service instance (AppMetrics: a registry per instance, process metrics in it).
import { Injectable } from '@nestjs/common';
import { AppMetrics } from '@countersign/platform';

@Injectable()
export class Metrics extends AppMetrics {
  readonly requestsReceived = this.counter(
    'countersign_approval_requests_total',
    'Approval requests taken off the queue, by how they were routed',
    ['outcome'],
  );

  readonly decisionsPublished = this.counter(
    'countersign_decisions_published_total',
    'Signed decisions published to approval-decisions',
    ['decision', 'decided_by'],
  );

  readonly votesRejected = this.counter(
    'countersign_votes_rejected_total',
    'Votes and interactions refused, by reason',
    ['reason'],
  );

  readonly unauthenticated = this.counter(
    'countersign_unauthenticated_requests_total',
    'Requests refused before they named anyone (bad or missing Slack signature, replay, forged or expired link), by channel and reason; counted and logged, not audited',
    ['channel', 'reason'],
  );

  readonly auditRetention = this.counter(
    'countersign_audit_retention_runs_total',
    'Audit retention runs, by result: trimmed (or nothing to do), busy (another replica trimmed), refused (an entry due for trimming does not verify), failed',
    ['result'],
  );

  readonly auditTrimmed = this.counter(
    'countersign_audit_trimmed_entries_total',
    'Audit entries trimmed past AUDIT_RETENTION by this replica',
  );

  readonly notifications = this.counter(
    'countersign_notifications_total',
    'Notification deliveries, by channel and result',
    ['channel', 'result'],
  );

  readonly timers = this.counter(
    'countersign_approval_timers_total',
    'Expiry and escalation timers run by the sweep, by kind and result (done, kept, failed)',
    ['kind', 'result'],
  );

  readonly timeToDecision = this.histogram(
    'countersign_time_to_decision_seconds',
    'From request to decision',
    [1, 5, 15, 60, 300, 900, 1_800, 3_600],
  );

  readonly admissionHookSeconds = this.histogram(
    'countersign_admission_hook_seconds',
    'Admission hook requests about calls submitted to the approvals API, by hook, stage and outcome (the answer, or failed)',
    [0.002, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5],
    ['hook', 'stage', 'outcome'],
  );
}
