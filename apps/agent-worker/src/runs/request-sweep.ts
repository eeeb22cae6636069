// Publishes the approval requests of parked calls that the job which parked them never put on the queue: it died
// (kill -9, a lost host) or failed between the park and the publish, and was not redelivered or retried (yet). The
// park notes each waiting call in an index before it parks and removes it once the request is published
// (UnpublishedRequests.markUnpublished), so a pass reads only what is overdue there: its cost does not grow with the number of
// parked runs. Every replica sweeps; a request's job ID is its request ID, so two replicas publishing one entry add
// one job.
import { Inject, Injectable, type OnApplicationBootstrap, type OnModuleDestroy } from '@nestjs/common';
import type { Logger } from '@countersign/platform';
import { WORKER_CONFIG, type WorkerConfig } from '../config/worker-config';
import { WORKER_LOGGER } from '../core/worker-logger';
import { WorkerMetrics } from '../core/worker-metrics';
import { isWaiting } from './frontier';
import { parseUnpublishedMember } from './run-keys';
import { RunParking } from './run-parking';
import { RunStore } from './run-store';
import { UnpublishedRequests } from './unpublished-requests';

/** Entries read at once. */
const BATCH = 100;
/** Most entries one pass looks at; a full pass is followed by the next one at once. */
const MAX_PER_PASS = 1_000;
/** Entries checked (and published) at once. */
const CONCURRENCY = 8;

/** What became of one overdue entry. */
type Handled = 'published' | 'dropped' | 'kept';

export interface SweepPass {
  published: number;
  /** Entries left for a later pass: their run is not parked (yet), e.g. a park in flight. */
  kept: number;
  /** Entries with nothing left to do: answered, the run moved on or is gone. */
  dropped: number;
}

@Injectable()
export class RequestSweep implements OnApplicationBootstrap, OnModuleDestroy {
  private next?: NodeJS.Timeout;
  /** The pass in progress; the next is scheduled when it ends, so passes never overlap. */
  private running?: Promise<void>;
  private stopped = false;
  /** REQUEST_SWEEP_MS: how often a pass runs, and how long a call waits for its own publish before a pass takes it. */
  private readonly intervalMs: number;

  constructor(
    @Inject(RunStore) private readonly store: Pick<RunStore, 'load'>,
    @Inject(UnpublishedRequests) private readonly index: UnpublishedRequests,
    @Inject(RunParking) private readonly parking: Pick<RunParking, 'publishRequests'>,
    @Inject(WorkerMetrics) metrics: Pick<WorkerMetrics, 'watchParkedWithoutRequest'>,
    @Inject(WORKER_LOGGER) private readonly logger: Logger,
    @Inject(WORKER_CONFIG) { env }: Pick<WorkerConfig, 'env'>,
  ) {
    this.intervalMs = env.REQUEST_SWEEP_MS;
    metrics.watchParkedWithoutRequest(() => this.overdue());
  }

  /** Starts once the app has booted; stops before the queues close (it publishes on them). */
  onApplicationBootstrap(): void {
    this.schedule(this.intervalMs);
  }

  /** Stops sweeping and waits for the pass in progress (it publishes on queues that close after this). */
  async onModuleDestroy(): Promise<void> {
    this.stopped = true;
    clearTimeout(this.next);
    await this.running;
  }

  /**
   * Parked calls with no live request: noted as unpublished longer than one sweep interval ago and still not
   * confirmed on the queue. 0 in normal operation (a publish takes milliseconds).
   */
  overdue(now = Date.now()): Promise<number> {
    return this.index.countUnpublishedBefore(now - this.intervalMs);
  }

  /** One pass over the overdue entries, oldest first, at most MAX_PER_PASS of them. */
  async sweep(now = Date.now()): Promise<SweepPass> {
    const pass: SweepPass = { published: 0, kept: 0, dropped: 0 };
    const before = now - this.intervalMs;
    for (let looked = 0; looked < MAX_PER_PASS;) {
      // Kept entries stay where they are, so the next page starts after them.
      const members = await this.index.unpublishedBefore(before, BATCH, pass.kept);
      if (members.length === 0) break;
      looked += members.length;
      for (let i = 0; i < members.length; i += CONCURRENCY) {
        const handled = await Promise.all(members.slice(i, i + CONCURRENCY).map((m) => this.handle(m)));
        for (const h of handled) pass[h]++;
      }
      if (members.length < BATCH) break;
    }
    if (pass.published > 0 || pass.dropped > 0)
      this.logger.warn(pass, 'request sweep: published requests their parking job left unpublished');
    return pass;
  }

  private async handle(member: string): Promise<Handled> {
    const entry = parseUnpublishedMember(member);
    const run = entry && (await this.store.load(entry.runId));
    if (!entry || !run || run.status === 'completed' || run.status === 'failed') {
      await this.index.dropUnpublished([member]);
      return 'dropped';
    }
    const call = run.frontier.find((c) => c.body.id === entry.callId && c.body.requestId === entry.requestId);
    const parked = run.status === 'awaiting_confirmation';
    if (!call) {
      // Parked on other requests: this one's park never happened (its turn ran again). Otherwise a park may be
      // in flight (the index is written just before the park script): look again next time.
      if (!parked) return 'kept';
      await this.index.dropUnpublished([member]);
      return 'dropped';
    }
    if (!isWaiting(call)) {
      // Decided, so its request went out.
      await this.index.dropUnpublished([member]);
      return 'dropped';
    }
    if (!parked) return 'kept';
    this.logger.warn(
      { runId: run.runId, callId: call.body.id, requestId: entry.requestId },
      'publishing a request its parking job left unpublished',
    );
    await this.parking.publishRequests(run, [call]);
    return 'published';
  }

  private schedule(delayMs: number): void {
    if (this.stopped) return;
    this.next = setTimeout(() => {
      this.running = this.sweep()
        .catch((error: unknown): SweepPass => {
          this.logger.error({ err: error }, 'request sweep failed; trying again next interval');
          return { published: 0, kept: 0, dropped: 0 };
        })
        .then((pass) => {
          this.running = undefined;
          // A backlog (e.g. after the queue was unreachable for a while) is worked off pass after pass.
          const backlog = pass.published + pass.dropped >= MAX_PER_PASS / 2;
          this.schedule(backlog ? 0 : this.intervalMs);
        });
    }, delayMs);
    this.next.unref();
  }
}
