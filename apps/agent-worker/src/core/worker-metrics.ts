// Prometheus metrics of one app instance (its own Registry: two instances may share a process).
import { Injectable } from '@nestjs/common';
import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from 'prom-client';

@Injectable()
export class WorkerMetrics {
  readonly registry = new Registry();

  readonly runsStarted = new Counter({
    name: 'countersign_runs_started_total',
    help: 'Runs started',
    registers: [this.registry],
  });
  readonly runsParked = new Counter({
    name: 'countersign_runs_parked_total',
    help: 'Times a run parked for decisions',
    registers: [this.registry],
  });
  readonly runsResumed = new Counter({
    name: 'countersign_runs_resumed_total',
    help: 'Times a parked run resumed',
    registers: [this.registry],
  });
  readonly runsFinished = new Counter({
    name: 'countersign_runs_finished_total',
    help: 'Runs that ended, by status',
    labelNames: ['status'] as const,
    registers: [this.registry],
  });
  readonly toolCalls = new Counter({
    name: 'countersign_tool_calls_total',
    help: 'Tool calls by outcome (executed, denied, pending_confirmation, manual_required, skipped, error, interrupted, reasked)',
    labelNames: ['outcome'] as const,
    registers: [this.registry],
  });
  readonly decisions = new Counter({
    name: 'countersign_decisions_total',
    help: 'Decisions taken off the queue, by what became of them',
    labelNames: ['result'] as const,
    registers: [this.registry],
  });
  readonly decisionToResume = new Histogram({
    name: 'countersign_decision_to_resume_seconds',
    help: 'From the decision message being enqueued to its run resuming',
    buckets: [0.002, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
    registers: [this.registry],
  });

  readonly admissionHookSeconds = new Histogram({
    name: 'countersign_admission_hook_seconds',
    help: 'Admission hook requests, by hook, stage (before_tool, after_tool) and outcome (the answer, or failed)',
    labelNames: ['hook', 'stage', 'outcome'] as const,
    buckets: [0.002, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5],
    registers: [this.registry],
  });

  private countParkedWithoutRequest?: () => Promise<number>;

  /** Read from Redis at each scrape (one ZCOUNT): the same figure on every replica. */
  readonly parkedWithoutRequest = new Gauge({
    name: 'countersign_parked_calls_without_request',
    help: 'Parked calls whose approval request was not confirmed on the queue one REQUEST_SWEEP_MS after they parked (0 in normal operation; the request sweep publishes them)',
    registers: [this.registry],
    collect: async () => {
      if (this.countParkedWithoutRequest)
        this.parkedWithoutRequest.set(await this.countParkedWithoutRequest());
    },
  });

  /** Where parkedWithoutRequest reads its figure (the request sweep). */
  watchParkedWithoutRequest(count: () => Promise<number>): void {
    this.countParkedWithoutRequest = count;
  }

  constructor() {
    // Process metrics too (CPU, heap, GC, event-loop lag): a busy event loop is what slows every Redis round
    // trip of a worker under load.
    collectDefaultMetrics({ register: this.registry });
  }
}
