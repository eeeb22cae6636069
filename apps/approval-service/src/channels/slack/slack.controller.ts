// Slack's interactivity endpoint. Order matters: signature and timestamp first (nothing else is trusted
// before), then replay, then the Slack user → approver mapping, then the vote. What fails the first two is junk
// anyone can send (counted, not audited); from the user mapping on, Slack vouches for who clicked (audited).
import {
  BadRequestException,
  Controller,
  Headers,
  HttpCode,
  Inject,
  Post,
  Req,
  ServiceUnavailableException,
  UnauthorizedException,
} from '@nestjs/common';
import { z } from 'zod';
import { PublicRoute, RateLimited, type Logger } from '@countersign/platform';
import { ApproverDirectory } from '../../auth/approver-directory';
import { UnauthenticatedRequests } from '../../auth/unauthenticated-requests';
import { APPROVAL_SERVICE_CONFIG, type ApprovalServiceConfig } from '../../config/approval-service.config';
import { ApprovalRoute } from '../../config/rate-limits';
import type { HttpRequest as Request } from '../../core/http-types';
import { LOGGER } from '../../core/tokens';
import { parseButtonValue, SlackAction } from '../../notifications/slack/slack-blocks';
import { SlackNotifier } from '../../notifications/slack/slack-notifier';
import { ApprovalReadModel } from '../../requests/approval-read-model';
import { nextStep } from '../../votes/next-step';
import { VoteRefusedError } from '../../votes/vote-errors';
import { VotesService } from '../../votes/votes.service';
import { SlackReplays } from './slack-replays';
import { SLACK_TIMESTAMP_WINDOW_SECONDS, verifySlackSignature } from './slack-signature';

const InteractionSchema = z.object({
  type: z.literal('block_actions'),
  user: z.object({ id: z.string().min(1) }),
  channel: z.object({ id: z.string().min(1) }).optional(),
  actions: z.array(z.object({ action_id: z.string(), value: z.string().optional() })).min(1),
});

@Controller('slack')
@PublicRoute("Slack's request signature (X-Slack-Signature over the raw body, 5-minute window, no replay)")
export class SlackController {
  constructor(
    @Inject(APPROVAL_SERVICE_CONFIG) private readonly config: ApprovalServiceConfig,
    private readonly votes: VotesService,
    private readonly readModel: ApprovalReadModel,
    private readonly replays: SlackReplays,
    private readonly directory: ApproverDirectory,
    private readonly unauthenticated: UnauthenticatedRequests,
    private readonly slack: SlackNotifier,
    @Inject(LOGGER) private readonly logger: Logger,
  ) {}

  @Post('interactions')
  @HttpCode(200)
  @RateLimited(ApprovalRoute.Slack)
  async interaction(
    @Req() req: Request,
    @Headers('x-slack-request-timestamp') timestamp: string | undefined,
    @Headers('x-slack-signature') signature: string | undefined,
  ): Promise<{ ok: boolean; status?: string; error?: string }> {
    const signingSecret = this.config.env.SLACK_SIGNING_SECRET;
    if (!signingSecret) throw new ServiceUnavailableException('Slack is not configured');
    const rawBody = req.rawBody?.toString('utf8') ?? '';

    const check = verifySlackSignature({ signingSecret, timestamp, signature, rawBody });
    if (!check.ok) {
      this.unauthenticated.refuse('slack', check.reason, { timestamp, signature });
      throw new UnauthorizedException(`Slack request refused: ${check.reason}`);
    }
    // Kept twice the timestamp window, so a replay is refused for as long as its timestamp would pass.
    const fresh = await this.replays.firstSeen(signature!, 2 * SLACK_TIMESTAMP_WINDOW_SECONDS);
    if (!fresh) {
      this.unauthenticated.refuse('slack', 'replay', { timestamp, signature });
      throw new UnauthorizedException('Slack request refused: replayed');
    }

    const interaction = parseInteraction((req.body as { payload?: unknown })?.payload);
    const action = interaction.actions[0];
    // The inbox link button: Slack opens the link itself and reports the click; there is nothing to do.
    if (action.action_id === SlackAction.OpenInbox) return { ok: true, status: 'opened' };
    const decision =
      action.action_id === SlackAction.Approve
        ? 'approve'
        : action.action_id === SlackAction.Deny
          ? 'deny'
          : undefined;
    const target = action.value ? parseButtonValue(action.value) : undefined;
    if (!decision || !target) throw new BadRequestException(`unknown Slack action ${action.action_id}`);

    const approver = this.directory.bySlackUser(interaction.user.id);
    if (!approver) {
      const clicked = (await this.readModel.get(target.requestId))?.request;
      await this.votes.reject({
        reason: 'unknown_slack_user',
        channel: 'slack',
        actor: `slack:${interaction.user.id}`,
        callId: clicked?.callId,
        runId: clicked?.runId,
        detail: { requestId: target.requestId },
      });
      await this.tell(interaction, 'You are not a Countersign approver, so your click was not counted.');
      return { ok: false, error: 'unknown Slack user' };
    }
    try {
      const result = await this.votes.vote({
        requestId: target.requestId,
        attempt: target.attempt,
        seen: { rev: target.rev },
        approver: approver.id,
        approverGroups: this.directory.groupsOf(approver.id),
        decision,
        reason: decision === 'deny' ? `denied in Slack by ${approver.name}` : undefined,
        channel: 'slack',
      });
      if (result.status === 'vote_recorded')
        await this.tell(interaction, nextStep(result, 'the call', { decision }));
      return { ok: true, status: result.status };
    } catch (error) {
      if (!(error instanceof VoteRefusedError)) throw error;
      await this.tell(interaction, `Not counted: ${error.message}.`);
      return { ok: false, error: error.message };
    }
  }

  /** An ephemeral reply to the clicking user; best effort (the HTTP answer already says what happened). */
  private async tell(interaction: z.infer<typeof InteractionSchema>, text: string): Promise<void> {
    if (!interaction.channel || !this.slack.enabled) return;
    await this.slack
      .tell(interaction.channel.id, interaction.user.id, text)
      .catch((error: unknown) =>
        this.logger.warn({ err: error }, 'could not send an ephemeral Slack message'),
      );
  }
}

function parseInteraction(payload: unknown) {
  let json: unknown;
  try {
    json = JSON.parse(String(payload));
  } catch {
    throw new BadRequestException('payload: must be JSON');
  }
  const parsed = InteractionSchema.safeParse(json);
  if (!parsed.success) {
    throw new BadRequestException(
      `invalid Slack payload: ${parsed.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`).join('; ')}`,
    );
  }
  return parsed.data;
}
