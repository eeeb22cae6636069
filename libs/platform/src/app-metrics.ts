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
