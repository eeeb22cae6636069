// Email through nodemailer. Without SMTP_URL / SMTP_HOST the messages are written to the log, never dropped.
import { Inject, Injectable, type OnApplicationShutdown } from '@nestjs/common';
import { createTransport, type Transporter } from 'nodemailer';
import type { Logger } from '@countersign/platform';
import { APPROVAL_SERVICE_CONFIG, type ApprovalServiceConfig } from '../../config/approval-service.config';
import { LOGGER } from '../../core/tokens';
import { NotDeliveredError } from '../delivery-errors';

export interface Mail {
  to: string;
  subject: string;
  text: string;
  html: string;
}

@Injectable()
export class EmailNotifier implements OnApplicationShutdown {
  private readonly transport: Transporter;
  private readonly toLog: boolean;
  private readonly from: string;

  constructor(
    @Inject(APPROVAL_SERVICE_CONFIG) { env }: ApprovalServiceConfig,
    @Inject(LOGGER) private readonly logger: Logger,
  ) {
    this.from = env.MAIL_FROM;
    this.toLog = !env.SMTP_URL && !env.SMTP_HOST;
    if (this.toLog) {
      logger.warn('no SMTP configured (SMTP_URL or SMTP_HOST): emails are written to the log');
      this.transport = createTransport({ jsonTransport: true });
    } else if (env.SMTP_URL) {
      this.transport = createTransport(env.SMTP_URL);
    } else {
      this.transport = createTransport({
        host: env.SMTP_HOST,
        port: env.SMTP_PORT,
        secure: env.SMTP_PORT === 465,
      });
    }
  }

  /**
   * Sends one mail. Throws NotDeliveredError when the server certainly did not take it; any other error leaves
   * that unknown (e.g. the connection dropped after the message was sent, before the server's answer).
   */
  async send(mail: Mail, context: { callId?: string; runId?: string; requester?: string }): Promise<void> {
    let info: { messageId?: string };
    try {
      info = await this.transport.sendMail({ from: this.from, ...mail });
    } catch (error) {
      if (notAccepted(error))
        throw new NotDeliveredError(`email not sent: ${(error as Error).message}`, { cause: error });
      throw error;
    }
    if (this.toLog)
      this.logger.info(
        { ...context, to: mail.to, subject: mail.subject, text: mail.text },
        'email (not sent: no SMTP configured)',
      );
    else this.logger.debug({ ...context, to: mail.to, messageId: info.messageId }, 'email sent');
  }

  onApplicationShutdown(): void {
    this.transport.close();
  }
}

/** Nodemailer codes of failures before the message could be taken: no server reached, no session, no envelope. */
const BEFORE_THE_MESSAGE = new Set(['EDNS', 'EAUTH', 'ENOAUTH', 'ECONFIG', 'EENVELOPE']);
/** Connection failures before anything was sent (nodemailer keeps the system code as originalCode). */
const NOT_REACHED = new Set(['ECONNREFUSED', 'ENOTFOUND', 'EAI_AGAIN']);

/**
 * Whether a failed send certainly left no mail with the server: it answered with a 4xx/5xx reply (to a command or
 * to the message itself: then it did not take the message), or the failure came before the message was sent.
 * A dropped connection or a timeout while the message or its answer was under way is not.
 */
function notAccepted(error: unknown): boolean {
  const { responseCode, code, originalCode } = error as {
    responseCode?: unknown;
    code?: unknown;
    originalCode?: unknown;
  };
  if (typeof responseCode === 'number' && responseCode >= 400) return true;
  if (typeof code === 'string' && BEFORE_THE_MESSAGE.has(code)) return true;
  return typeof originalCode === 'string' && NOT_REACHED.has(originalCode);
}
