// Run events fan out through Redis pub/sub: every process subscribes once and filters by run,
// so any replica can serve the SSE stream of any run. Events emitted in the same tick travel in one
// message (a JSON array); a process with no SSE client open does not even parse them.
import { Observable, Subject, filter } from 'rxjs';
import { type RunEvent, RunEventSchema } from '@countersign/contracts';
import type { Logger, RedisClient } from '@countersign/platform';
import { runEventsChannel } from './run-keys';

export class RunEvents {
  private readonly channel: string;
  private readonly live = new Subject<RunEvent>();
  private outbox: RunEvent[] = [];

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
      if (channel !== this.channel || !this.live.observed) return;
      const message = safeJson(text);
      for (const item of Array.isArray(message) ? message : [message]) {
        const parsed = RunEventSchema.safeParse(item);
        if (parsed.success) this.live.next(parsed.data);
        else this.logger.warn({ channel }, 'dropped a malformed run event');
      }
    });
    await this.subscriber.subscribe(this.channel);
  }

  /** Fire and forget: events are a live view; the state in Redis is the truth. Sent, in order, at the end of the tick. */
  publish(...events: RunEvent[]): void {
    if (events.length === 0) return;
    if (this.outbox.length === 0) queueMicrotask(() => this.flush());
    this.outbox.push(...events);
  }

  private flush(): void {
    const events = this.outbox;
    this.outbox = [];
    const text = JSON.stringify(events.length === 1 ? events[0] : events);
    this.publisher.publish(this.channel, text).catch((error: Error) => {
      const runIds = [...new Set(events.map((e) => e.runId))];
      this.logger.warn({ runIds, err: error.message }, 'could not publish run events');
    });
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
