// Email through nodemailer. Without SMTP_URL / SMTP_HOST the messages are written to the log, never dropped.
import { Inject, Injectable, type OnApplicationShutdown } from '@nestjs/common';
import { createTransport, type Transporter } from 'nodemailer';
import type { Logger } from '@countersign/platform';
import { APPROVAL_SERVICE_CONFIG, type ApprovalServiceConfig } from '../config/approval-service.config';
import { LOGGER } from '../core/tokens';

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

  async send(mail: Mail, context: { callId: string; runId: string }): Promise<void> {
    const info = await this.transport.sendMail({ from: this.from, ...mail });
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
