// Slack Web API calls (official SDK). Disabled when no bot token is configured. No SDK retries:
// the notification queue retries with backoff, so a Slack outage never blocks anything else.
import { Inject, Injectable } from '@nestjs/common';
import { WebClient } from '@slack/web-api';
import type { Logger } from '@countersign/platform';
import { APPROVAL_SERVICE_CONFIG, type ApprovalServiceConfig } from '../config/approval-service.config';
import { LOGGER } from '../core/tokens';
import type { SlackMessage } from './slack-blocks';

@Injectable()
export class SlackNotifier {
  private readonly client?: WebClient;

  constructor(
    @Inject(APPROVAL_SERVICE_CONFIG) { env }: ApprovalServiceConfig,
    @Inject(LOGGER) logger: Logger,
  ) {
    if (!env.SLACK_BOT_TOKEN) {
      logger.info('Slack is disabled (no SLACK_BOT_TOKEN)');
      return;
    }
    const apiUrl = env.SLACK_API_URL.endsWith('/') ? env.SLACK_API_URL : `${env.SLACK_API_URL}/`;
    this.client = new WebClient(env.SLACK_BOT_TOKEN, {
      slackApiUrl: apiUrl,
      retryConfig: { retries: 0 },
      rejectRateLimitedCalls: true,
      timeout: 10_000,
    });
  }

  get enabled(): boolean {
    return this.client !== undefined;
  }

  /** Posts a message; returns where it landed so it can be updated later. */
  async post(channel: string, message: SlackMessage): Promise<{ channel: string; ts: string }> {
    const reply = await this.required().chat.postMessage({
      channel,
      text: message.text,
      blocks: message.blocks as never,
      unfurl_links: false,
    });
    if (!reply.ok || !reply.ts || !reply.channel)
      throw new Error(`Slack chat.postMessage failed: ${reply.error ?? 'no ts'}`);
    return { channel: reply.channel, ts: reply.ts };
  }

  async update(channel: string, ts: string, message: SlackMessage): Promise<void> {
    const reply = await this.required().chat.update({
      channel,
      ts,
      text: message.text,
      blocks: message.blocks as never,
    });
    if (!reply.ok) throw new Error(`Slack chat.update failed: ${reply.error}`);
  }

  /** A message only `user` sees, e.g. "already decided by bob". */
  async tell(channel: string, user: string, text: string): Promise<void> {
    await this.required().chat.postEphemeral({ channel, user, text });
  }

  private required(): WebClient {
    if (!this.client) throw new Error('Slack is not configured');
    return this.client;
  }
}
