// Webhooks of external approvals: a signed POST of the decision to the URL its client gave. A webhook only tells the
// client to look (it can always read the approval, and must claim before running), so delivery is at least once:
// retried with backoff on the notification queue until the client answers 2xx.
import { createHmac } from 'node:crypto';
import { Inject, Injectable } from '@nestjs/common';
import { UnrecoverableError } from 'bullmq';
import { webhookSignature } from '@countersign/authorization';
import { WEBHOOK_HEADERS, type JobPayload, type WebhookPayload } from '@countersign/contracts';
import type { Logger } from '@countersign/platform';
import { APPROVAL_SERVICE_CONFIG, type ApprovalServiceConfig } from '../config/approval-service.config';
import { AuditTrail } from '../core/audit-trail';
import { Metrics } from '../core/metrics';
import { ServiceAddress } from '../core/service-address';
import { LOGGER } from '../core/tokens';
import { ExternalCallStore } from './external-call-store';
import { externalView } from './external-view';

/** How long a webhook receiver may take to answer. */
const WEBHOOK_TIMEOUT_MS = 10_000;

@Injectable()
export class ExternalWebhooks {
  private readonly secret?: string;
  private readonly origins: string[];

  constructor(
    @Inject(APPROVAL_SERVICE_CONFIG) { env }: ApprovalServiceConfig,
    private readonly store: ExternalCallStore,
    private readonly address: ServiceAddress,
    private readonly audit: AuditTrail,
    private readonly metrics: Metrics,
    @Inject(LOGGER) private readonly logger: Logger,
  ) {
    this.secret = env.WEBHOOK_SIGNING_SECRET;
    this.origins = env.WEBHOOK_ALLOWED_ORIGINS;
  }

  /**
   * Why a webhook URL is refused, or undefined when it may be used: webhooks must be enabled and the URL's origin
   * listed, so a client cannot make the service call an address of the operator's network.
   */
  refusal(url: string): string | undefined {
    if (!this.secret || this.origins.length === 0)
      return 'webhooks are not enabled on this service (WEBHOOK_ALLOWED_ORIGINS)';
    if (!this.origins.includes(new URL(url).origin))
      return `the origin ${new URL(url).origin} is not in WEBHOOK_ALLOWED_ORIGINS`;
    return undefined;
  }

  /**
   * Each client's own signing secret, derived from WEBHOOK_SIGNING_SECRET, so one client cannot sign webhooks that
   * another client would accept. undefined when webhooks are off.
   */
  secretFor(principalId: string): string | undefined {
    if (!this.secret) return undefined;
    return createHmac('sha256', this.secret).update(`countersign-webhook:${principalId}`).digest('hex');
  }

  async deliver(job: JobPayload<'notify.webhook'>): Promise<void> {
    const stored = await this.store.get(job.callId);
    const origin = stored?.request.external;
    if (!stored || !origin?.webhookUrl || stored.request.attempt !== job.attempt) return;
    const ids = { callId: job.callId, runId: stored.request.runId };
    const refused = this.refusal(origin.webhookUrl);
    const secret = this.secretFor(origin.principal);
    if (refused || !secret) throw new UnrecoverableError(`webhook not sent: ${refused}`);
    const payload: WebhookPayload = {
      type: 'approval.decided',
      approval: externalView(stored, this.address.publicUrl),
    };
    const body = JSON.stringify(payload);
    const timestamp = String(Math.floor(Date.now() / 1000));
    const response = await fetch(origin.webhookUrl, {
      method: 'POST',
      headers: {
        'Content-Type': 'application/json',
        [WEBHOOK_HEADERS.timestamp]: timestamp,
        [WEBHOOK_HEADERS.signature]: webhookSignature(secret, timestamp, body),
      },
      body,
      // A redirect could lead anywhere, past the allowed origins.
      redirect: 'manual',
      signal: AbortSignal.timeout(WEBHOOK_TIMEOUT_MS),
    });
    await response.body?.cancel();
    if (!response.ok) throw new Error(`webhook answered ${response.status}`);
    this.metrics.notifications.inc({ channel: 'webhook', result: 'sent' });
    this.logger.info({ ...ids, status: response.status }, 'webhook delivered');
    this.audit.record({
      type: 'notification.sent',
      ...ids,
      detail: { channel: 'webhook', target: origin.webhookUrl, decision: payload.approval.status },
    });
  }
}
