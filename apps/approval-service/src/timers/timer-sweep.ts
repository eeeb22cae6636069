// Runs the expiry and escalation timers that are due. Every replica sweeps every TIMER_SWEEP_MS; a sweep claims
// due timers under a lease (one script), so each runs on one replica at a time, and removes each it finished.
// A timer whose run failed, or whose replica died mid-run, is due again when the lease runs out and is retried:
// the handlers are idempotent (the request scripts are compare-and-set, decisions have deterministic job IDs).
import { Inject, Injectable, type OnApplicationBootstrap, type OnModuleDestroy } from '@nestjs/common';
import type { Logger } from '@countersign/platform';
import { APPROVAL_SERVICE_CONFIG, type ApprovalServiceConfig } from '../config/approval-service.config';
import { AuditTrail } from '../core/audit-trail';
import { Metrics } from '../core/metrics';
import { LOGGER } from '../core/tokens';
import { RequestStore } from '../requests/request-store';
import { DueTimers, type ClaimedTimer } from './due-timers';
import type { TimerRef } from './timer-member';
import { TimersService, type TimerOutcome } from './timers.service';

/** Timers claimed from one shard by one sweep; a full batch is followed by another sweep at once. */
const BATCH = 100;
/** Timers of one batch run at once. */
const CONCURRENCY = 8;
/** How often a replica also trims settled calls, and audit entries, past their retention. */
const TRIM_EVERY_MS = 60_000;

@Injectable()
export class TimerSweep implements OnApplicationBootstrap, OnModuleDestroy {
  private readonly intervalMs: number;
  private readonly leaseMs: number;
  private next?: NodeJS.Timeout;
  /** The sweep in progress; the next one is scheduled only when it ends, so sweeps never overlap. */
  private running?: Promise<void>;
  private stopped = false;
  private lastTrim = 0;

  constructor(
    @Inject(APPROVAL_SERVICE_CONFIG) { env }: ApprovalServiceConfig,
    private readonly timers: DueTimers,
    private readonly handlers: TimersService,
    private readonly requests: RequestStore,
    private readonly audit: AuditTrail,
    private readonly metrics: Metrics,
    @Inject(LOGGER) private readonly logger: Logger,
  ) {
    this.intervalMs = env.TIMER_SWEEP_MS;
    this.leaseMs = env.TIMER_LEASE_MS;
  }

  onApplicationBootstrap(): void {
    this.timers
      .adoptOpenRequests()
      .then((adopted) => {
        if (adopted > 0) this.logger.info({ adopted }, 'expiry timers added for open requests that had none');
      })
      .catch((error: unknown) => this.logger.error({ err: error }, 'adopting open requests failed'));
    this.schedule(0);
  }

  /** Stops sweeping and waits for the sweep in progress to finish. */
  async onModuleDestroy(): Promise<void> {
    this.stopped = true;
    clearTimeout(this.next);
    await this.running;
  }

  /**
   * Claims the timers due now and runs them, shard by shard (each under its own lease); returns the most it claimed
   * from one shard. Each finished timer is removed unless it was moved meanwhile; a failed one is left to its lease.
   * A shard that cannot be read (say, its master is failing over) is logged and skipped: the others are swept.
   */
  async sweep(now = Date.now()): Promise<number> {
    let most = 0;
    for (const shard of this.timers.keys.shards) {
      try {
        const claim = await this.timers.claim(shard, now, this.leaseMs, BATCH);
        most = Math.max(most, claim.timers.length);
        const finished: ClaimedTimer[] = [];
        await eachLimited(claim.timers, CONCURRENCY, async (claimed) => {
          if ((await this.run(claimed)) === 'done') finished.push(claimed);
        });
        await this.timers.finish(claim, finished);
      } catch (error) {
        this.logger.error({ err: error, shard: shard.index }, 'timer sweep of one approval shard failed');
      }
    }
    if (now - this.lastTrim >= TRIM_EVERY_MS) {
      this.lastTrim = now;
      const trimmed = await this.requests.trimSettled(now);
      if (trimmed > 0)
        this.logger.info({ trimmed }, 'settled calls past their retention left the status sets');
      await this.trimAudit(now);
    }
    return most;
  }

  /** Audit retention; every replica tries, the trim script lets one at a time through. Never fails the sweep. */
  private async trimAudit(now: number): Promise<void> {
    try {
      const result = await this.audit.trim(now);
      this.metrics.auditRetention.inc({ result: result.status });
      this.metrics.auditTrimmed.inc(result.trimmed);
    } catch (error) {
      this.metrics.auditRetention.inc({ result: 'failed' });
      this.logger.error({ err: error }, 'audit retention failed; it is tried again with the next trim');
    }
  }

  private schedule(delayMs: number): void {
    if (this.stopped) return;
    this.next = setTimeout(() => {
      this.running = this.sweep()
        .catch((error: unknown) => {
          this.logger.error({ err: error }, 'timer sweep failed');
          return 0;
        })
        .then((claimed) => {
          this.running = undefined;
          this.schedule(claimed >= BATCH ? 0 : this.intervalMs);
        });
    }, delayMs);
  }

  /** Runs one timer; a failure is logged and counted, and the timer is retried after its lease. */
  private async run({ member, timer }: ClaimedTimer): Promise<TimerOutcome | 'failed'> {
    if (!timer) {
      this.logger.warn({ member }, 'removed a timer this service cannot read');
      return 'done';
    }
    const { kind, requestId, attempt } = timer;
    try {
      const outcome = await this.fire(timer);
      this.metrics.timers.inc({ kind, result: outcome });
      return outcome;
    } catch (error) {
      this.metrics.timers.inc({ kind, result: 'failed' });
      this.logger.error(
        { requestId, attempt, timer: kind, err: error, retryInMs: this.leaseMs },
        'timer failed; it is retried when its lease runs out',
      );
      return 'failed';
    }
  }

  private fire({ kind, requestId, attempt }: TimerRef): Promise<TimerOutcome> {
    switch (kind) {
      case 'expire':
        return this.handlers.expire(requestId, attempt);
      case 'escalate':
        return this.handlers.escalate(requestId, attempt);
      default: {
        const unknown: never = kind;
        throw new Error(`unknown timer kind "${String(unknown)}"`);
      }
    }
  }
}

/** Runs `work` over `items`, at most `limit` at a time. */
async function eachLimited<T>(items: T[], limit: number, work: (item: T) => Promise<void>): Promise<void> {
  let nextIndex = 0;
  const lane = async () => {
    while (nextIndex < items.length) await work(items[nextIndex++]);
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, lane));
}
