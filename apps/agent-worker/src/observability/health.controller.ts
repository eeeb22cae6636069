import { Controller, Get, HttpException, Inject } from '@nestjs/common';
import { PublicRoute, QueueWorkers, RedisConnections, redisAnswers } from '@countersign/platform';

@Controller()
export class HealthController {
  constructor(
    @Inject(RedisConnections) private readonly connections: RedisConnections,
    @Inject(QueueWorkers) private readonly workers: QueueWorkers,
  ) {}

  /** 200 when Redis answers and the queue workers run; 503 naming what is down otherwise. */
  @Get('health')
  @PublicRoute('load balancers and orchestrators probe it; it says only up or down')
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
}
