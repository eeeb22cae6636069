// Prometheus metrics of one worker instance (AppMetrics: its own Registry, two instances may share a process; process
// metrics in it, as a busy event loop is what slows every Redis round trip of a worker under load). Those of its tool
// calls (outcomes, admission hooks, shadow policy) are ToolCallMetrics, defined once with the MCP gateway's.
import { Injectable } from '@nestjs/common';
import { Gauge } from 'prom-client';
import { ToolCallMetrics } from '@countersign/platform';

@Injectable()
export class WorkerMetrics extends ToolCallMetrics {
  readonly runsStarted = this.counter('countersign_runs_started_total', 'Runs started');
  readonly runsParked = this.counter('countersign_runs_parked_total', 'Times a run parked for decisions');
  readonly runsResumed = this.counter('countersign_runs_resumed_total', 'Times a parked run resumed');
  readonly runsFinished = this.counter('countersign_runs_finished_total', 'Runs that ended, by status', [
    'status',
  ]);
  readonly decisions = this.counter(
    'countersign_decisions_total',
    'Decisions taken off the queue, by what became of them',
    ['result'],
  );
  readonly decisionToResume = this.histogram(
    'countersign_decision_to_resume_seconds',
    'From the decision message being enqueued to its run resuming',
    [0.002, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
  );

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
}
