// The shared hash-chained audit log (AuditLog batches this process's appends onto this process's own chain).
import { Inject, Injectable, type OnApplicationShutdown } from '@nestjs/common';
import { AuditLog, type AuditInput, type Logger, RedisConnections } from '@countersign/platform';
import { APPROVAL_SERVICE_CONFIG, type ApprovalServiceConfig } from '../config/approval-service.config';
import { LOGGER } from './tokens';

@Injectable()
export class AuditTrail implements OnApplicationShutdown {
  readonly log: AuditLog;

  constructor(
    @Inject(APPROVAL_SERVICE_CONFIG) { env }: ApprovalServiceConfig,
    redis: RedisConnections,
    @Inject(LOGGER) private readonly logger: Logger,
  ) {
    this.log = new AuditLog(redis.commands, env.KEY_PREFIX, 'approval-service');
  }

  /** Appends one entry; resolves once it is in Redis. */
  append(entry: AuditInput): Promise<string> {
    return this.log.append(entry);
  }

  /**
   * Appends without waiting, for hot paths (request intake, publishing): the HTTP answer and the decision
   * never wait behind the audit backlog. Entries keep their call order; a failure is logged.
   */
  record(entry: AuditInput): void {
    this.log
      .append(entry)
      .catch((error: unknown) =>
        this.logger.error(
          { err: error, type: entry.type, callId: entry.callId, runId: entry.runId },
          'audit append failed',
        ),
      );
  }

  /**
   * Lets queued appends finish before the connections close: after the queue workers, the follow-ups and the
   * HTTP server have stopped appending (the queue module closes the connections after this, being imported).
   */
  async onApplicationShutdown(): Promise<void> {
    await this.log.drain();
  }
}
