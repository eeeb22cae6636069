// Slack Web API calls (official SDK). Disabled when no bot token is configured. No SDK retries:
// the notification queue retries with backoff, so a Slack outage never blocks anything else.
import { Inject, Injectable } from '@nestjs/common';
import { ErrorCode, LogLevel, WebClient, type Logger as SlackLogger } from '@slack/web-api';
import type { Logger } from '@countersign/platform';
import { APPROVAL_SERVICE_CONFIG, type ApprovalServiceConfig } from '../../config/approval-service.config';
import { LOGGER } from '../../core/tokens';
import { NotDeliveredError } from '../delivery-errors';
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
      logger: slackLogger(logger),
    });
  }

  get enabled(): boolean {
    return this.client !== undefined;
  }

  /**
   * Posts a message; returns where it landed so it can be updated later. Throws NotDeliveredError when the
   * message certainly was not posted; any other error leaves that unknown (e.g. a timeout after sending).
   */
  async post(channel: string, message: SlackMessage): Promise<{ channel: string; ts: string }> {
    const client = this.required();
    let reply: Awaited<ReturnType<typeof client.chat.postMessage>>;
    try {
      reply = await client.chat.postMessage({
        channel,
        text: message.text,
        blocks: message.blocks as never,
        unfurl_links: false,
      });
    } catch (error) {
      if (notPosted(error))
        throw new NotDeliveredError(`Slack chat.postMessage failed: ${(error as Error).message}`, {
          cause: error,
        });
      throw error;
    }
    // ok without a ts or channel: posted, but nowhere we could update; no NotDeliveredError, so not posted again.
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

  /** Opens a modal for the user whose click carried `triggerId` (Slack lets it be used for 3 seconds, once). */
  async openView(triggerId: string, view: Record<string, unknown>): Promise<void> {
    const reply = await this.required().views.open({ trigger_id: triggerId, view: view as never });
    if (!reply.ok) throw new Error(`Slack views.open failed: ${reply.error}`);
  }

  private required(): WebClient {
    if (!this.client) throw new Error('Slack is not configured');
    return this.client;
  }
}

/** Connection failures before anything was sent. */
const NOT_REACHED = new Set(['ECONNREFUSED', 'ENOTFOUND', 'EAI_AGAIN']);

/**
 * Whether a failed chat.postMessage posted nothing: Slack answered ok:false or a rate limit, or it was never
 * reached. A timeout or a dropped connection after sending is not: Slack may have posted. An HTTP error status
 * counts as not posted: the Web API answers 200 for every call it carried out, errors included, so another status
 * comes from in front of it (a gateway timeout after a post is the exception we accept: treating 5xx as in doubt
 * would lose a message at every Slack outage instead).
 */
function notPosted(error: unknown): boolean {
  const code = (error as { code?: unknown }).code;
  if (code === ErrorCode.PlatformError || code === ErrorCode.HTTPError || code === ErrorCode.RateLimitedError)
    return true;
  if (code !== ErrorCode.RequestError) return false;
  return neverConnected((error as { original?: unknown }).original);
}

/** fetch reports a refused connection as `TypeError: fetch failed` whose cause (or causes) carry the code. */
function neverConnected(error: unknown): boolean {
  if (!error || typeof error !== 'object') return false;
  const { code, cause, errors } = error as { code?: unknown; cause?: unknown; errors?: unknown };
  if (typeof code === 'string' && NOT_REACHED.has(code)) return true;
  if (Array.isArray(errors) && errors.length > 0) return errors.every(neverConnected);
  return neverConnected(cause);
}

/** The SDK's own lines (e.g. "http request failed") go to pino, not the console; debug lines are dropped. */
function slackLogger(logger: Logger): SlackLogger {
  const log = logger.child({ component: 'slack-web-api' });
  const line = (msg: unknown[]) => msg.map(String).join(' ');
  return {
    debug: () => undefined,
    info: (...msg: unknown[]) => log.info(line(msg)),
    warn: (...msg: unknown[]) => log.warn(line(msg)),
    error: (...msg: unknown[]) => log.error(line(msg)),
    setLevel: () => undefined,
    getLevel: () => LogLevel.INFO,
    setName: () => undefined,
  };
}
