// Run events fan out through Redis pub/sub: every process subscribes once and filters by run,
// so any replica can serve the SSE stream of any run.
import { Observable, Subject, filter } from 'rxjs';
import { type RunEvent, RunEventSchema, runEventsChannel } from '@countersign/contracts';
import type { Logger, RedisClient } from '@countersign/platform';

export class RunEvents {
  private readonly channel: string;
  private readonly live = new Subject<RunEvent>();

  constructor(
    private readonly publisher: RedisClient,
    private readonly subscriber: RedisClient,
    keyPrefix: string,
    private readonly logger: Logger,
  ) {
    this.channel = runEventsChannel(keyPrefix);
  }

  async start(): Promise<void> {
    this.subscriber.on('message', (channel: string, text: string) => {
      if (channel !== this.channel) return;
      const parsed = RunEventSchema.safeParse(safeJson(text));
      if (parsed.success) this.live.next(parsed.data);
      else this.logger.warn({ channel }, 'dropped a malformed run event');
    });
    await this.subscriber.subscribe(this.channel);
  }

  /** Fire and forget: events are a live view; the state in Redis is the truth. */
  publish(...events: RunEvent[]): void {
    for (const event of events) {
      this.publisher.publish(this.channel, JSON.stringify(event)).catch((error: Error) => {
        this.logger.warn({ runId: event.runId, err: error.message }, 'could not publish a run event');
      });
    }
  }

  forRun(runId: string): Observable<RunEvent> {
    return this.live.pipe(filter((e) => e.runId === runId));
  }

  stop(): void {
    this.live.complete();
  }
}

function safeJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}
