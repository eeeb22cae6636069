// Work that follows an answered request (live updates, outcome notices, marking published, trust counts): the caller
// does not wait for it, a failure is logged, and the service waits for all of it before its connections close.
import { Inject, Injectable, type BeforeApplicationShutdown } from '@nestjs/common';
import type { Logger } from '@countersign/platform';
import { LOGGER } from './tokens';

/** The IDs every log line about a request carries. */
export interface RequestIds {
  callId: string;
  runId?: string;
  requestId: string;
}

@Injectable()
export class FollowUps implements BeforeApplicationShutdown {
  private readonly running = new Set<Promise<void>>();

  constructor(@Inject(LOGGER) private readonly logger: Logger) {}

  /** Runs `work` without the caller waiting for it; a failure is logged, and shutdown waits for it. */
  add(ids: RequestIds, work: Promise<unknown>): void {
    const tracked: Promise<void> = work
      .then(() => undefined)
      .catch((error: unknown) => this.logger.error({ ...ids, err: error }, 'follow-up after a change failed'))
      .finally(() => this.running.delete(tracked));
    this.running.add(tracked);
  }

  /**
   * Lets follow-up work finish before the queues and connections close. After onModuleDestroy, so the queue
   * workers and the timer sweep have stopped and add no more of it.
   */
  async beforeApplicationShutdown(): Promise<void> {
    while (this.running.size > 0) await Promise.all([...this.running]);
  }
}
