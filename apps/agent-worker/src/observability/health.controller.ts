import { Controller, Get, Header, HttpException, Inject } from '@nestjs/common';
import { QueueWorkers, RedisConnections, redisAnswers } from '@countersign/platform';
import { WorkerMetrics } from './worker-metrics';

@Controller()
export class HealthController {
  constructor(
    @Inject(RedisConnections) private readonly connections: RedisConnections,
    @Inject(QueueWorkers) private readonly workers: QueueWorkers,
    @Inject(WorkerMetrics) private readonly metrics: WorkerMetrics,
  ) {}

  /** 200 when Redis answers and the queue workers run; 503 naming what is down otherwise. */
  @Get('health')
  async health(): Promise<{ status: 'ok'; redis: 'up'; queues: 'running' }> {
    const redis = await redisAnswers(this.connections.commands);
    const queues = this.workers.isRunning();
    if (!redis || !queues) {
      throw new HttpException(
        { status: 'down', redis: redis ? 'up' : 'down', queues: queues ? 'running' : 'stopped' },
        503,
      );
    }
    return { status: 'ok', redis: 'up', queues: 'running' };
  }

  @Get('metrics')
  @Header('Content-Type', 'text/plain; version=0.0.4')
  metricsText(): Promise<string> {
    return this.metrics.registry.metrics();
  }
}
