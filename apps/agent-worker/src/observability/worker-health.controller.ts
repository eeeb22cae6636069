// GET /health: whether this replica can work (Redis answers, its queue workers run), for load balancers and
// orchestrators.
import { Controller, Get, HttpException, Inject } from '@nestjs/common';
import { PublicRoute, QueueWorkers, RedisConnections, redisAnswers } from '@countersign/platform';
import { RequestSweep } from '../runs/request-sweep';

interface Health {
  status: 'ok';
  redis: 'up';
  queues: 'running';
  /** Parked calls whose approval request never reached the queue (see RequestSweep): 0 in normal operation. */
  parkedCallsWithoutRequest: number;
}

@Controller()
export class WorkerHealthController {
  constructor(
    @Inject(RedisConnections) private readonly connections: RedisConnections,
    @Inject(QueueWorkers) private readonly workers: QueueWorkers,
    @Inject(RequestSweep) private readonly requests: RequestSweep,
  ) {}

  /**
   * 200 when Redis answers and the queue workers run; 503 naming what is down otherwise. A parked call without a
   * request is a detail, not a reason to take this replica out: the sweep of every replica works on it.
   */
  @Get('health')
  @PublicRoute('load balancers and orchestrators probe it; it says only up or down, and counts')
  async health(): Promise<Health> {
    const redis = await redisAnswers(this.connections.commands);
    const queues = this.workers.isRunning();
    // Redis may go between the ping and the count: the answer must not wait for its reconnect either.
    const parkedCallsWithoutRequest = redis ? await withinMs(this.requests.overdue(), 1_000) : undefined;
    const up = parkedCallsWithoutRequest !== undefined;
    if (!up || !queues) {
      throw new HttpException(
        { status: 'down', redis: up ? 'up' : 'down', queues: queues ? 'running' : 'stopped' },
        503,
      );
    }
    return { status: 'ok', redis: 'up', queues: 'running', parkedCallsWithoutRequest };
  }
}

/** The value, or undefined when it failed or took longer than `ms`. */
async function withinMs<T>(work: Promise<T>, ms: number): Promise<T | undefined> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<undefined>((resolve) => {
    timer = setTimeout(() => resolve(undefined), ms);
  });
  try {
    return await Promise.race([work.catch(() => undefined), late]);
  } finally {
    clearTimeout(timer);
  }
}
