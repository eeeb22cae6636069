// The shared hash-chained audit log, with appends from this process serialized: AuditLog appends by
// compare-and-set on the chain head, so concurrent appends from one process would only retry each other.
import { Inject, Injectable } from '@nestjs/common';
import { AuditLog, type AuditInput, type Logger } from '@countersign/platform';
import { APPROVAL_SERVICE_CONFIG, type ApprovalServiceConfig } from '../config/approval-service.config';
import { RedisConnections } from './redis-connections';
import { LOGGER } from './tokens';

@Injectable()
export class AuditTrail {
  readonly log: AuditLog;
  private tail: Promise<unknown> = Promise.resolve();

  constructor(
    @Inject(APPROVAL_SERVICE_CONFIG) { env }: ApprovalServiceConfig,
    redis: RedisConnections,
    @Inject(LOGGER) private readonly logger: Logger,
  ) {
    this.log = new AuditLog(redis.commands, env.KEY_PREFIX, 'approval-service');
  }

  /** Appends one entry; resolves once it is in Redis. */
  append(entry: AuditInput): Promise<string> {
    const appended = this.tail.then(() => this.log.append(entry));
    this.tail = appended.catch((error: unknown) =>
      this.logger.error({ err: error, type: entry.type, callId: entry.callId }, 'audit append failed'),
    );
    return appended;
  }
}
