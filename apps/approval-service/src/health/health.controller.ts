// Liveness with its dependencies (Redis, queues, due timers). Metrics are MetricsController's (@countersign/platform).
import { Controller, Get, ServiceUnavailableException } from '@nestjs/common';
import { PublicRoute, Queues, RedisConnections, redisAnswers } from '@countersign/platform';
import { DueTimers } from '../timers/due-timers';

@Controller()
export class HealthController {
  constructor(
    private readonly redis: RedisConnections,
    private readonly queues: Queues,
    private readonly timers: DueTimers,
  ) {}

  @Get('health')
  @PublicRoute('load balancers and orchestrators probe it; it shows queue and timer counts, no one’s data')
  async health(): Promise<{
    status: 'ok';
    redis: 'up';
    queues: Record<string, Record<string, number>>;
    /** Expiry/escalation timers: all of them, and those past due (a growing `due` means sweeps fall behind). */
    timers: { scheduled: number; due: number };
  }> {
    if (!(await redisAnswers(this.redis.commands)))
      throw new ServiceUnavailableException({
        status: 'unavailable',
        redis: 'down',
        error: 'Redis does not answer',
      });
    try {
      const counts = await Promise.all(
        this.queues.labelled.map(
          async ({ label, queue }) =>
            [label, await queue.getJobCounts('waiting', 'active', 'delayed', 'failed')] as const,
        ),
      );
      const timers = await this.timers.counts(Date.now());
      return { status: 'ok', redis: 'up', queues: Object.fromEntries(counts), timers };
    } catch (error) {
      throw new ServiceUnavailableException({
        status: 'unavailable',
        redis: 'down',
        error: (error as Error).message,
      });
    }
  }
}
