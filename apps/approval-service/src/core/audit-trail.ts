// The shared hash-chained audit log, with appends from this process serialized: AuditLog appends by
// compare-and-set on the chain head, so concurrent appends from one process would only retry each other.
import { Inject, Injectable, type OnModuleDestroy } from '@nestjs/common';
import { AuditLog, type AuditInput, type Logger } from '@countersign/platform';
import { APPROVAL_SERVICE_CONFIG, type ApprovalServiceConfig } from '../config/approval-service.config';
import { RedisConnections } from './redis-connections';
import { LOGGER } from './tokens';

@Injectable()
export class AuditTrail implements OnModuleDestroy {
  readonly log: AuditLog;
  private tail: Promise<unknown> = Promise.resolve();

  constructor(
    @Inject(APPROVAL_SERVICE_CONFIG) { env }: ApprovalServiceConfig,
    redis: RedisConnections,
    @Inject(LOGGER) private readonly logger: Logger,
  ) {
    this.log = new AuditLog(redis.commands, env.KEY_PREFIX, 'approval-service');
  }

  /**
   * Appends one entry; resolves once it is in Redis. Hot paths (request intake, publishing) call `record`
   * instead, so the HTTP answer and the decision never wait behind the audit backlog; order is kept.
   */
  append(entry: AuditInput): Promise<string> {
    const appended = this.tail.then(() => this.log.append(entry));
    this.tail = appended.catch((error: unknown) =>
      this.logger.error({ err: error, type: entry.type, callId: entry.callId }, 'audit append failed'),
    );
    return appended;
  }

  /** Appends without waiting; a failure is logged (the entry order is still the call order). */
  record(entry: AuditInput): void {
    this.append(entry).catch(() => undefined);
  }

  /** Lets queued appends finish before the connections close. */
  async onModuleDestroy(): Promise<void> {
    await this.tail;
  }
}
