// Change notices for open inboxes, over Redis pub/sub so every replica's inbox sees every change.
import { EventEmitter } from 'node:events';
import { Inject, Injectable, type OnModuleDestroy, type OnModuleInit } from '@nestjs/common';
import { type Logger, RedisConnections } from '@countersign/platform';
import type { ApprovalKeys } from '../core/approval-keys';
import { APPROVAL_KEYS, LOGGER } from '../core/tokens';
import { RequestStore } from './request-store';

export interface ApprovalChange {
  requestId: string;
  status: string;
  /** Groups the request was routed to before this change (an edit routed it anew): their inboxes refresh too. */
  groups?: string[];
  /**
   * The request's call ID and the groups it is routed to as of this change (comma-separated, as the request hash
   * stores them), when the announcer knows them: every replica then tells its inboxes without reading them back
   * (issue 27). Without them, each replica reads them (one HMGET per change).
   */
  callId?: string;
  routedTo?: string;
}

/**
 * A change as open inboxes get it: with the groups the request is routed to, so each inbox keeps only its own, and
 * its call ID (what live clients knew requests by before requests had IDs).
 */
export interface RoutedChange extends ApprovalChange {
  callId: string;
  groups: string[];
}

@Injectable()
export class LiveUpdates implements OnModuleInit, OnModuleDestroy {
  private readonly channel: string;
  private readonly events = new EventEmitter().setMaxListeners(0);
  private readonly closers = new Set<() => void>();

  constructor(
    private readonly redis: RedisConnections,
    private readonly store: RequestStore,
    @Inject(APPROVAL_KEYS) keys: ApprovalKeys,
    @Inject(LOGGER) private readonly logger: Logger,
  ) {
    this.channel = keys.changes;
  }

  async onModuleInit(): Promise<void> {
    this.redis.subscriber.on('message', (channel: string, message: string) => {
      if (channel !== this.channel || this.events.listenerCount('change') === 0) return;
      let change: ApprovalChange;
      try {
        change = JSON.parse(message) as ApprovalChange;
      } catch (error) {
        this.logger.warn({ err: error }, 'ignored a malformed live-update message');
        return;
      }
      // The route as announced, or one lookup per change, whatever the number of open inboxes; each inbox then
      // filters by its own groups.
      const route =
        typeof change.callId === 'string' && typeof change.routedTo === 'string'
          ? Promise.resolve({ callId: change.callId, groups: change.routedTo.split(',').filter(Boolean) })
          : this.store.routeOf(change.requestId);
      route.then(
        ({ callId, groups }) =>
          this.events.emit('change', {
            requestId: change.requestId,
            status: change.status,
            callId,
            groups: [...new Set([...groups, ...(change.groups ?? [])])],
          } satisfies RoutedChange),
        (error: unknown) =>
          this.logger.warn({ err: error, requestId: change.requestId }, 'live update not sent'),
      );
    });
    await this.redis.subscriber.subscribe(this.channel);
  }

  async announce(change: ApprovalChange): Promise<void> {
    await this.redis.commands.publish(this.channel, JSON.stringify(change));
  }

  /** Calls `listener` for every change until the returned function is called (or the app closes). */
  subscribe(listener: (change: RoutedChange) => void, onClose: () => void): () => void {
    this.events.on('change', listener);
    let closed = false;
    const close = () => {
      if (closed) return;
      closed = true;
      this.events.off('change', listener);
      this.closers.delete(close);
      onClose();
    };
    this.closers.add(close);
    return close;
  }

  /** Ends every open stream, so the HTTP server can close. */
  onModuleDestroy(): void {
    for (const close of [...this.closers]) close();
  }
}
