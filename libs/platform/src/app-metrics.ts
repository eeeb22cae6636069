// The Prometheus metrics of one app instance: its own Registry (tests start several instances in one process) with
// the process metrics in it, and one way to declare a metric in it.
import { collectDefaultMetrics, Counter, Histogram, Registry } from 'prom-client';

export abstract class AppMetrics {
  readonly registry = new Registry();

  constructor() {
    // Process metrics too (CPU, heap, GC, event-loop lag): a busy event loop slows every Redis round trip.
    collectDefaultMetrics({ register: this.registry });
  }

  /** A counter in this instance's registry, with the labels it is counted by (none by default). */
  protected counter<L extends string = string>(
    name: string,
    help: string,
    labelNames: readonly L[] = [],
  ): Counter<L> {
    return new Counter({ name, help, labelNames, registers: [this.registry] });
  }

  /** A histogram in this instance's registry, observed in `buckets`, with the labels it is observed by (none by default). */
  protected histogram<L extends string = string>(
    name: string,
    help: string,
    buckets: number[],
    labelNames: readonly L[] = [],
  ): Histogram<L> {
    return new Histogram({ name, help, buckets, labelNames, registers: [this.registry] });
  }
}

/**
 * The metrics of a service that runs tool calls through the policy pipeline (the agent worker, the MCP gateway): one
 * definition of each, so a dashboard reads them alike from either.
 */
export abstract class ToolCallMetrics extends AppMetrics {
  readonly toolCalls = this.counter(
    'countersign_tool_calls_total',
    'Tool calls by outcome (executed, denied, responded, pending_confirmation, manual_required, skipped, aborted, error, interrupted, reasked)',
    ['outcome'],
  );

  readonly admissionHookSeconds = this.histogram(
    'countersign_admission_hook_seconds',
    'Admission hook requests, by hook, stage (before_tool, after_tool, confirmation) and outcome (the answer, or failed)',
    [0.002, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5],
    ['hook', 'stage', 'outcome'],
  );

  readonly policyShadowDisagreements = this.counter(
    'countersign_policy_shadow_disagreements_total',
    "Tool calls on which the shadow policy set disagreed with the active rules, by each one's outcome (denied or a tier)",
    ['active', 'shadow'],
  );

  readonly policyShadowErrors = this.counter(
    'countersign_policy_shadow_errors_total',
    'Tool calls the shadow policy set could not evaluate (they were decided by the active rules alone)',
  );
}
