// The shared HMAC-chained audit log (AuditLog batches this process's appends onto this process's own chain).
import { Inject, Injectable, type OnApplicationShutdown } from '@nestjs/common';
import { type Logger, RedisConnections } from '@countersign/platform';
import {
  AuditKeyring,
  AuditLog,
  type AuditInput,
  type ChainCheck,
  type TrimResult,
} from '@countersign/audit';
import { APPROVAL_SERVICE_CONFIG, type ApprovalServiceConfig } from '../config/approval-service.config';
import { LOGGER } from './tokens';

@Injectable()
export class AuditTrail implements OnApplicationShutdown {
  readonly log: AuditLog;
  private readonly retentionMs: number;
  /** The verification in progress: callers arriving meanwhile share it instead of walking the stream again. */
  private verifying?: Promise<ChainCheck>;

  constructor(
    @Inject(APPROVAL_SERVICE_CONFIG) { env }: ApprovalServiceConfig,
    redis: RedisConnections,
    @Inject(LOGGER) private readonly logger: Logger,
  ) {
    const keyring = AuditKeyring.fromEnv(env);
    this.log = new AuditLog(redis.commands, env.KEY_PREFIX, 'approval-service', keyring, {
      shards: env.AUDIT_SHARDS,
    });
    this.retentionMs = env.AUDIT_RETENTION;
    // Which secret signs, and which still verify: what an operator rotating AUDIT_SIGNING_SECRET compares with /audit/verify.
    logger.info({ current: keyring.current.id, verifying: keyring.ids }, 'audit signing keys');
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

  /** Walks the whole log (GET /audit/verify); concurrent callers share one walk. */
  verify(): Promise<ChainCheck> {
    this.verifying ??= this.log.verify().finally(() => (this.verifying = undefined));
    return this.verifying;
  }

  /** Trims entries past AUDIT_RETENTION as of `now` (the timer sweep calls this); says what it did in the log. */
  async trim(now = Date.now()): Promise<TrimResult> {
    const result = await this.log.trim(this.retentionMs, now);
    if (result.status === 'refused')
      this.logger.error(
        { trimmed: result.trimmed, at: result.at, reason: result.reason },
        'audit retention stopped at an entry that does not verify; GET /audit/verify says more',
      );
    else if (result.trimmed > 0)
      this.logger.info(
        { trimmed: result.trimmed, more: result.status === 'trimmed' && result.more },
        'audit entries past their retention trimmed',
      );
    return result;
  }

  /**
   * Lets queued appends finish before the connections close: after the queue workers, the follow-ups and the
   * HTTP server have stopped appending (the queue module closes the connections after this, being imported).
   */
  async onApplicationShutdown(): Promise<void> {
    await this.log.drain();
  }
}
