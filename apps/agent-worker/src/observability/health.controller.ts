import { Controller, Get, HttpException, Inject } from '@nestjs/common';
import { PublicRoute, redisAnswers } from '@countersign/platform';
import { Connections } from '../queues/connections';
import { QueueWorkers } from '../queues/queue-workers';

@Controller()
export class HealthController {
  constructor(
    @Inject(Connections) private readonly connections: Connections,
    @Inject(QueueWorkers) private readonly workers: QueueWorkers,
  ) {}

  /** 200 when Redis answers and the queue workers run; 503 naming what is down otherwise. */
  @Get('health')
  @PublicRoute('load balancers and orchestrators probe it; it says only up or down')
  async health(): Promise<{ status: 'ok'; redis: 'up'; queues: 'running' }> {
    const redis = await redisAnswers(this.connections.commands);
    const queues = await this.workers.isRunning();
    if (!redis || !queues) {
      throw new HttpException(
        { status: 'down', redis: redis ? 'up' : 'down', queues: queues ? 'running' : 'stopped' },
        503,
      );
    }
    return { status: 'ok', redis: 'up', queues: 'running' };
  }
}
