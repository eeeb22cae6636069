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
import { ResponseTextSchema } from '@countersign/contracts';
import { PublicRoute, RateLimited, type Logger } from '@countersign/platform';
import { ApproverDirectory } from '../../auth/approver-directory';
import { UnauthenticatedRequests } from '../../auth/unauthenticated-requests';
import { APPROVAL_SERVICE_CONFIG, type ApprovalServiceConfig } from '../../config/approval-service.config';
import { ApprovalRoute } from '../../config/rate-limits';
import type { HttpRequest as Request } from '../../core/http-types';
import { LOGGER } from '../../core/tokens';
import {
  parseButtonValue,
  respondModal,
  RespondModal,
  SlackAction,
} from '../../notifications/slack/slack-blocks';
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
  /** Slack's, for opening a modal in answer to this click (the Respond button). */
  trigger_id: z.string().min(1).max(200).optional(),
  actions: z.array(z.object({ action_id: z.string(), value: z.string().optional() })).min(1),
});

/** The respond modal submitted (see respondModal): the text is read from its input, the request from its metadata. */
const ViewSubmissionSchema = z.object({
  type: z.literal('view_submission'),
  user: z.object({ id: z.string().min(1) }),
  view: z.object({
    callback_id: z.literal(RespondModal.callbackId),
    private_metadata: z.string().max(3_000),
    state: z.object({
      values: z.object({
        [RespondModal.blockId]: z.object({
          [RespondModal.actionId]: z.object({ value: z.string().nullish() }),
        }),
      }),
    }),
  }),
});

const ModalMetadataSchema = z.object({ value: z.string(), channel: z.string().min(1).optional() });

const PayloadSchema = z.discriminatedUnion('type', [InteractionSchema, ViewSubmissionSchema]);

type Interaction = z.infer<typeof InteractionSchema>;
type ViewSubmission = z.infer<typeof ViewSubmissionSchema>;

/** What a view_submission is answered with: close the modal, or keep it open with an error under the input. */
type ModalAnswer =
  { response_action: 'clear' } | { response_action: 'errors'; errors: Record<string, string> };

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
  ): Promise<{ ok: boolean; status?: string; error?: string } | ModalAnswer> {
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

    const payload = parsePayload((req.body as { payload?: unknown })?.payload);
    if (payload.type === 'view_submission') return this.respond(payload);
    const interaction = payload;
    const action = interaction.actions[0];
    // The inbox link button: Slack opens the link itself and reports the click; there is nothing to do.
    if (action.action_id === SlackAction.OpenInbox) return { ok: true, status: 'opened' };
    const decision =
      action.action_id === SlackAction.Approve
        ? 'approve'
        : action.action_id === SlackAction.Deny
          ? 'deny'
          : action.action_id === SlackAction.Respond
            ? 'respond'
            : undefined;
    const target = action.value ? parseButtonValue(action.value) : undefined;
    if (!decision || !target) throw new BadRequestException(`unknown Slack action ${action.action_id}`);
    if (decision === 'respond') {
      // The click only opens the modal; its submission is the vote (checked then, like every vote).
      if (!interaction.trigger_id)
        throw new BadRequestException('trigger_id: needed to open the respond modal');
      return this.openRespondModal(interaction, action.value!, target.requestId);
    }

    const approver = await this.approverOrRefusal(interaction.user.id, target.requestId);
    if (!approver) {
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

  /**
   * The approver a Slack user is, or undefined after recording the refused vote of a Slack user who is none (a click
   * or a respond modal's submission alike).
   */
  private async approverOrRefusal(
    slackUserId: string,
    requestId: string,
    detail: Record<string, unknown> = {},
  ): Promise<ReturnType<ApproverDirectory['bySlackUser']>> {
    const approver = this.directory.bySlackUser(slackUserId);
    if (approver) return approver;
    const request = (await this.readModel.get(requestId))?.request;
    await this.votes.reject({
      reason: 'unknown_slack_user',
      channel: 'slack',
      actor: `slack:${slackUserId}`,
      callId: request?.callId,
      runId: request?.runId,
      detail: { requestId, ...detail },
    });
    return undefined;
  }

  /** The Respond button: a modal asking for the text (nothing is decided until it is submitted). */
  private async openRespondModal(
    interaction: Interaction,
    value: string,
    requestId: string,
  ): Promise<{ ok: boolean; status?: string; error?: string }> {
    const request = (await this.readModel.get(requestId))?.request;
    if (!request) {
      await this.tell(interaction, `Not counted: no approval request ${requestId}.`);
      return { ok: false, error: `no approval request ${requestId}` };
    }
    await this.slack.openView(
      interaction.trigger_id!,
      respondModal(request.toolName, value, interaction.channel?.id),
    );
    return { ok: true, status: 'modal_opened' };
  }

  /**
   * The respond modal submitted: a vote with decision "respond" and the typed text, on the request, attempt and
   * revision its Respond button was shown for, by the approver Slack says submitted it. A refusal keeps the modal
   * open with the reason under the input.
   */
  private async respond(submission: ViewSubmission): Promise<ModalAnswer> {
    const refuse = (message: string): ModalAnswer => ({
      response_action: 'errors',
      errors: { [RespondModal.blockId]: message.slice(0, 1_000) },
    });
    const metadata = parseMetadata(submission.view.private_metadata);
    const target = metadata && parseButtonValue(metadata.value);
    if (!target) throw new BadRequestException('view.private_metadata: not a respond modal of ours');
    const typed = submission.view.state.values[RespondModal.blockId][RespondModal.actionId].value ?? '';
    const response = ResponseTextSchema.safeParse(typed);
    if (!response.success) return refuse(`The response ${response.error.issues[0].message}.`);
    const tellIn = {
      user: submission.user,
      channel: metadata.channel ? { id: metadata.channel } : undefined,
    };
    const approver = await this.approverOrRefusal(submission.user.id, target.requestId, {
      decision: 'respond',
    });
    if (!approver) {
      return refuse('You are not a Countersign approver, so your response was not counted.');
    }
    try {
      const result = await this.votes.vote({
        requestId: target.requestId,
        attempt: target.attempt,
        seen: { rev: target.rev },
        approver: approver.id,
        approverGroups: this.directory.groupsOf(approver.id),
        decision: 'respond',
        response: response.data,
        channel: 'slack',
      });
      const toolName = result.status === 'decided' ? result.request.toolName : 'the call';
      await this.tell(tellIn, nextStep(result, toolName, { decision: 'respond' }));
      return { response_action: 'clear' };
    } catch (error) {
      if (!(error instanceof VoteRefusedError)) throw error;
      return refuse(`Not counted: ${error.message}.`);
    }
  }

  /** An ephemeral reply to the clicking user; best effort (the HTTP answer already says what happened). */
  private async tell(interaction: Pick<Interaction, 'user' | 'channel'>, text: string): Promise<void> {
    if (!interaction.channel || !this.slack.enabled) return;
    await this.slack
      .tell(interaction.channel.id, interaction.user.id, text)
      .catch((error: unknown) =>
        this.logger.warn({ err: error }, 'could not send an ephemeral Slack message'),
      );
  }
}

function parseMetadata(text: string): z.infer<typeof ModalMetadataSchema> | undefined {
  try {
    const parsed = ModalMetadataSchema.safeParse(JSON.parse(text));
    return parsed.success ? parsed.data : undefined;
  } catch {
    return undefined;
  }
}

function parsePayload(payload: unknown) {
  let json: unknown;
  try {
    json = JSON.parse(String(payload));
  } catch {
    throw new BadRequestException('payload: must be JSON');
  }
  const parsed = PayloadSchema.safeParse(json);
  if (!parsed.success) {
    throw new BadRequestException(
      `invalid Slack payload: ${parsed.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`).join('; ')}`,
    );
  }
  return parsed.data;
}
