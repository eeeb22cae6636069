// Prometheus metrics, in a registry per app instance (tests start several in one process).
import { Injectable } from '@nestjs/common';
import { collectDefaultMetrics, Counter, Histogram, Registry } from 'prom-client';

@Injectable()
export class Metrics {
  readonly registry = new Registry();

  readonly requestsReceived = new Counter({
    name: 'countersign_approval_requests_total',
    help: 'Approval requests taken off the queue, by how they were routed',
    labelNames: ['outcome'] as const,
    registers: [this.registry],
  });

  readonly decisionsPublished = new Counter({
    name: 'countersign_decisions_published_total',
    help: 'Signed decisions published to approval-decisions',
    labelNames: ['decision', 'decided_by'] as const,
    registers: [this.registry],
  });

  readonly votesRejected = new Counter({
    name: 'countersign_votes_rejected_total',
    help: 'Votes and interactions refused, by reason',
    labelNames: ['reason'] as const,
    registers: [this.registry],
  });

  readonly unauthenticated = new Counter({
    name: 'countersign_unauthenticated_requests_total',
    help: 'Requests refused before they named anyone (bad or missing Slack signature, replay, forged or expired link), by channel and reason; counted and logged, not audited',
    labelNames: ['channel', 'reason'] as const,
    registers: [this.registry],
  });

  readonly auditRetention = new Counter({
    name: 'countersign_audit_retention_runs_total',
    help: 'Audit retention runs, by result: trimmed (or nothing to do), busy (another replica trimmed), refused (an entry due for trimming does not verify), failed',
    labelNames: ['result'] as const,
    registers: [this.registry],
  });

  readonly auditTrimmed = new Counter({
    name: 'countersign_audit_trimmed_entries_total',
    help: 'Audit entries trimmed past AUDIT_RETENTION by this replica',
    registers: [this.registry],
  });

  readonly notifications = new Counter({
    name: 'countersign_notifications_total',
    help: 'Notification deliveries, by channel and result',
    labelNames: ['channel', 'result'] as const,
    registers: [this.registry],
  });

  readonly timers = new Counter({
    name: 'countersign_approval_timers_total',
    help: 'Expiry and escalation timers run by the sweep, by kind and result (done, kept, failed)',
    labelNames: ['kind', 'result'] as const,
    registers: [this.registry],
  });

  readonly timeToDecision = new Histogram({
    name: 'countersign_time_to_decision_seconds',
    help: 'From request to decision',
    buckets: [1, 5, 15, 60, 300, 900, 1_800, 3_600],
    registers: [this.registry],
  });

  constructor() {
    collectDefaultMetrics({ register: this.registry });
  }
}
