// The queues an app adds jobs to: every shard of each (see queue-shards.ts), shard 0 as @nestjs/bullmq registered it
// (injectable with `@InjectQueue(name)`), the others built beside it. Producers pick a job's shard with forKey();
// /health counts every shard; close() closes them before their connection.
import type { Queue } from 'bullmq';
import type { QueueName } from '@countersign/contracts';
import { type Logger, throttledErrorLog } from '../logger';
import { queueShardOf } from './queue-shards';

export interface LabelledQueue {
  /** The queue's name; past shard 0, with `#<shard>` (for /health). */
  label: string;
  queue: Queue;
}

export class Queues {
  readonly all: readonly Queue[];
  readonly labelled: readonly LabelledQueue[];

  /** `shards`: every produced queue's copies, shard 0 first, all of the same length. */
  constructor(
    private readonly shards: ReadonlyMap<QueueName, readonly Queue[]>,
    logger: Logger,
  ) {
    this.labelled = [...shards].flatMap(([name, copies]) =>
      copies.map((queue, shard) => ({ label: shard === 0 ? name : `${name}#${shard}`, queue })),
    );
    this.all = this.labelled.map((l) => l.queue);
    // While Redis is down every reconnect attempt is an error event: logged, throttled (an unheard one is
    // printed by BullMQ with its stack, once per attempt).
    const reportError = throttledErrorLog(logger, 'queue producer error');
    for (const { label, queue } of this.labelled)
      queue.on('error', (error) => reportError({ queue: label }, error));
  }

  /** The copy of queue `name` that carries the jobs of `shardKey` (a run ID; an external approval's ID). */
  forKey(name: QueueName, shardKey: string): Queue {
    const copies = this.shards.get(name);
    if (!copies) throw new Error(`queue ${name} is not one this app produces to`);
    return copies[queueShardOf(shardKey, copies.length)]!;
  }

  async close(): Promise<void> {
    await Promise.allSettled(this.all.map((queue) => queue.close()));
  }
}
