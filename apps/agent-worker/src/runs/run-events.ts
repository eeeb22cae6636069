// Run events go into the run's bounded history (fields of its hash) and fan out through Redis pub/sub in the same
// script, numbered: every process subscribes once and filters by run, so any replica can serve the SSE stream of
// any run, replaying the history first. Events of one run emitted in the same tick travel in one script call and
// one message; a process with no SSE client open does not even parse them.
import type { BeforeApplicationShutdown, OnModuleInit } from '@nestjs/common';
import { filter, Observable, ReplaySubject, Subject } from 'rxjs';
import { type RunEvent, RunEventBatchSchema } from '@countersign/contracts';
import type { Logger, RedisClient } from '@countersign/platform';
import { decodeRunEvent, type NumberedRunEvent } from './run-event-codec';
import { runEventsChannel } from './run-keys';
import type { MarkedRunEvent, RunStore } from './run-store';

/** Live events of one run, kept from the moment it was asked for until `close()`. */
export interface LiveRunEvents {
  events: Observable<NumberedRunEvent>;
  close(): void;
}

/**
 * Subscribed before the queue workers start (module init), and stopped after they finished their in-flight jobs and
 * tool calls (before shutdown, after every module's destroy hook).
 */
export class RunEvents implements OnModuleInit, BeforeApplicationShutdown {
  private readonly channel: string;
  private readonly live = new Subject<NumberedRunEvent>();
  /** `once`: the marker of an event sent at most once (publishOnce). */
  private outbox: MarkedRunEvent[] = [];

  constructor(
    private readonly store: RunStore,
    private readonly subscriber: RedisClient,
    keyPrefix: string,
    private readonly logger: Logger,
  ) {
    this.channel = runEventsChannel(keyPrefix);
  }

  onModuleInit(): Promise<void> {
    return this.start();
  }

  beforeApplicationShutdown(): void {
    this.stop();
  }

  async start(): Promise<void> {
    this.subscriber.on('message', (channel: string, text: string) => {
      if (channel !== this.channel || !this.live.observed) return;
      for (const event of this.parse(text)) this.live.next(event);
    });
    await this.subscriber.subscribe(this.channel);
  }

  private parse(text: string): NumberedRunEvent[] {
    const batch = RunEventBatchSchema.safeParse(safeJson(text));
    const events = batch.success
      ? batch.data.events.map((stored, i) => ({
          seq: batch.data.seq + i,
          event: decodeRunEvent(batch.data.runId, stored),
        }))
      : [];
    if (!batch.success || events.some((e) => !e.event)) {
      this.logger.warn({ channel: this.channel }, 'dropped a malformed run event message');
      return [];
    }
    return events as NumberedRunEvent[];
  }

  /**
   * Fire and forget: the history and the live view follow the run's state in Redis, which is the truth. Sent, in
   * order, at the end of the tick. Not for a run's last events: finishRun stores them with the run's end.
   */
  publish(...events: RunEvent[]): void {
    if (events.length === 0) return;
    if (this.outbox.length === 0) queueMicrotask(() => this.flush());
    this.outbox.push(...events.map((event) => ({ event })));
  }

  /**
   * The same for an event its run's history gets at most once under `marker` (a fresh turn's call result, which a
   * turn re-run after a crash would send again). In order with the events published around it.
   */
  publishOnce(marker: string, event: RunEvent): void {
    if (this.outbox.length === 0) queueMicrotask(() => this.flush());
    this.outbox.push({ event, once: marker });
  }

  /** One script call per run and tick, with the events marked to be sent once among them when there are any. */
  private flush(): void {
    const byRun = new Map<string, MarkedRunEvent[]>();
    for (const entry of this.outbox) {
      const ofRun = byRun.get(entry.event.runId);
      if (ofRun) ofRun.push(entry);
      else byRun.set(entry.event.runId, [entry]);
    }
    this.outbox = [];
    for (const [runId, entries] of byRun) {
      const sent = entries.some((e) => e.once !== undefined)
        ? this.store.appendEventsOnce(runId, entries)
        : this.store.appendEvents(
            runId,
            entries.map((e) => e.event),
          );
      sent.catch((error: Error) => {
        this.logger.warn({ runId, err: error.message }, 'could not store and publish run events');
      });
    }
  }

  /**
   * Subscribes now, and keeps what arrives until the returned stream is read: ask for it before reading the
   * history, so that no event falls between the two (the caller drops the ones the history had, by number).
   */
  forRun(runId: string): LiveRunEvents {
    const kept = new ReplaySubject<NumberedRunEvent>();
    const subscription = this.live.pipe(filter((e) => e.event.runId === runId)).subscribe(kept);
    return { events: kept, close: () => subscription.unsubscribe() };
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
