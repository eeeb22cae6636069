// Liveness with its dependencies (Redis, queues) and Prometheus metrics.
import { Controller, Get, Header, ServiceUnavailableException } from '@nestjs/common';
import { Metrics } from '../core/metrics';
import { Queues } from '../core/queues';
import { RedisConnections } from '../core/redis-connections';

@Controller()
export class HealthController {
  constructor(
    private readonly redis: RedisConnections,
    private readonly queues: Queues,
    private readonly metrics: Metrics,
  ) {}

  @Get('health')
  async health(): Promise<{ status: 'ok'; redis: 'up'; queues: Record<string, Record<string, number>> }> {
    try {
      await this.redis.commands.ping();
      const counts = await Promise.all(
        this.queues.all.map(
          async (q) => [q.name, await q.getJobCounts('waiting', 'active', 'delayed', 'failed')] as const,
        ),
      );
      return { status: 'ok', redis: 'up', queues: Object.fromEntries(counts) };
    } catch (error) {
      throw new ServiceUnavailableException({
        status: 'unavailable',
        redis: 'down',
        error: (error as Error).message,
      });
    }
  }

  @Get('metrics')
  @Header('Content-Type', 'text/plain; version=0.0.4')
  metricsText(): Promise<string> {
    return this.metrics.registry.metrics();
  }
}
