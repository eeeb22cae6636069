// The queues an app adds jobs to, as @nestjs/bullmq registered them: for health checks and for closing them
// before their connection. Producers inject each one with `@InjectQueue(name)`.
import type { Queue } from 'bullmq';
import { type Logger, throttledErrorLog } from '../logger';

export class Queues {
  constructor(
    readonly all: readonly Queue[],
    logger: Logger,
  ) {
    // While Redis is down every reconnect attempt is an error event: logged, throttled (an unheard one is
    // printed by BullMQ with its stack, once per attempt).
    const reportError = throttledErrorLog(logger, 'queue producer error');
    for (const queue of all) queue.on('error', (error) => reportError({ queue: queue.name }, error));
  }

  async close(): Promise<void> {
    await Promise.allSettled(this.all.map((queue) => queue.close()));
  }
}
