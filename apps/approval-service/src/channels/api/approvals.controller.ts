// The approvals REST API (and the CLI, which uses it): list and read requests (the read model), and decide as an
// authenticated approver (the votes service). A path names a request by its request ID, or by its call ID when that
// names one request (ApprovalReadModel.resolve).
import {
  Body,
  ConflictException,
  Controller,
  Get,
  HttpCode,
  NotFoundException,
  Param,
  Post,
  Query,
  Req,
  Res,
  UseFilters,
} from '@nestjs/common';
import type { HttpRequest as Request, HttpResponse as Response } from '../../core/http-types';
import {
  ApprovalListQuerySchema,
  DecisionBodySchema,
  encodeApprovalCursor,
  IdSchema,
  NoticeDoneBodySchema,
  type NoticeDoneBody,
  type ApprovalCursor,
  type ApprovalListQuery,
  type ApprovalView,
  type DecisionBody,
  type DecisionResult,
} from '@countersign/contracts';
import { CurrentPrincipal, type Principal, RateLimited, ZodValidationPipe } from '@countersign/platform';
import { ApproverDirectory } from '../../auth/approver-directory';
import { ApprovalRoute } from '../../config/rate-limits';
import { AmbiguousCallIdError, ApprovalReadModel, type Resolution } from '../../requests/approval-read-model';
import type { StoredApproval } from '../../requests/approval-types';
import { toView } from '../../requests/approval-views';
import { maySee, type Caller } from '../../votes/deciders';
import { nextStep } from '../../votes/next-step';
import { VotesService } from '../../votes/votes.service';
import { VoteRefusedFilter } from '../vote-refused.filter';

@Controller('approvals')
@UseFilters(VoteRefusedFilter)
export class ApprovalsController {
  constructor(
    private readonly readModel: ApprovalReadModel,
    private readonly votes: VotesService,
    private readonly directory: ApproverDirectory,
  ) {}

  /**
   * One page of the requests the caller may see (maySee: routed to their groups, or decided by them): each list in score order (pending by creation,
   * decided and expired by settling), the lists in APPROVAL_LIST_ORDER when no status is asked for. `limit`
   * bounds what is read; entries of other groups are left out after reading, so a page may hold fewer (even
   * none) while a `Link: <…>; rel="next"` header says more follow.
   */
  @Get()
  async list(
    @Query(new ZodValidationPipe(ApprovalListQuerySchema, 'query')) query: ApprovalListQuery,
    @CurrentPrincipal() approver: Principal,
    @Res({ passthrough: true }) res: Response,
  ): Promise<ApprovalView[]> {
    const page = await this.readModel.list({
      statuses: query.status ? [query.status] : undefined,
      limit: query.limit,
      after: query.cursor,
    });
    if (page.next) res.setHeader('Link', `<${nextPageUrl(query, page.next)}>; rel="next"`);
    const caller = this.caller(approver);
    const visible = page.approvals.filter((a) => maySee(caller, a));
    return (await this.readModel.describe(visible)).map(toView);
  }

  /** `id`: a request ID, or a call ID that names one request. */
  @Get(':id')
  async get(
    @Param('id', new ZodValidationPipe(IdSchema, 'id')) id: string,
    @CurrentPrincipal() approver: Principal,
  ): Promise<ApprovalView> {
    const caller = this.caller(approver);
    const approval = named(id, await this.readModel.resolve(id, (a) => maySee(caller, a)));
    if (!approval || !maySee(caller, approval)) throw new NotFoundException(`no approval request ${id}`);
    await this.readModel.describe([approval]);
    return toView(approval);
  }

  /**
   * 200 when this vote decided the request, 202 when it was counted towards a quorum, or when its edit routed the
   * request anew to groups the approver is not in (`rerouted`: the edit stands, the vote does not count). `args`
   * (approve only): the arguments as the approver edited them, checked against the tool's schema (400 naming the
   * field) and routed like a new request (400 when no route takes them); `fingerprint`: what the approver was shown
   * (409 when the arguments were edited since). A request not routed to the caller answers 404, like an unknown one.
   */
  @Post(':id/decisions')
  @HttpCode(200)
  @RateLimited(ApprovalRoute.Decision)
  async decide(
    @Param('id', new ZodValidationPipe(IdSchema, 'id')) id: string,
    @Body(new ZodValidationPipe(DecisionBodySchema)) body: DecisionBody,
    @CurrentPrincipal() approver: Principal,
    @Req() req: Request,
    @Res({ passthrough: true }) res: Response,
  ): Promise<DecisionResult> {
    const vote = {
      approver: approver.id,
      approverGroups: this.directory.groupsOf(approver.id),
      decision: body.decision,
      reason: body.reason,
      ...(body.response !== undefined ? { response: body.response } : {}),
      channel: channelOf(req),
      ...(body.args ? { editedArgs: body.args } : {}),
      ...(body.fingerprint ? { seen: { fingerprint: body.fingerprint } } : {}),
    };
    const { requestId, result } = await this.votes.voteOn(id, vote).catch((error: unknown) => {
      if (error instanceof AmbiguousCallIdError) throw ambiguous(error);
      throw error;
    });
    const { callId } = result;
    const toolName = result.status === 'decided' ? result.request.toolName : 'the call';
    const next = nextStep(result, toolName, { decision: body.decision, reason: body.reason });
    const route = result.rerouted && {
      rule: result.rerouted.rule,
      why: result.rerouted.why,
      groups: result.rerouted.groups,
      quorum: result.rerouted.quorum,
    };
    const shared = { callId, requestId, ...(route ? { route } : {}), next };
    if (result.status === 'rerouted') {
      res.status(202);
      return { ...shared, status: 'rerouted', approvals: 0, quorum: route!.quorum };
    }
    if (result.status === 'vote_recorded') {
      res.status(202);
      return { ...shared, status: 'vote_recorded', approvals: result.approvals, quorum: result.quorum };
    }
    return {
      ...shared,
      status: 'decided',
      decision: result.outcome.decision,
      approvers: result.outcome.approvers,
    };
  }

  /**
   * A manual-step notice (`id`: its request ID, or a call ID that names one request): a person did the step. The run's
   * model is told at its next turn.
   */
  @Post(':id/done')
  @HttpCode(200)
  @RateLimited(ApprovalRoute.Decision)
  async done(
    @Param('id', new ZodValidationPipe(IdSchema, 'id')) id: string,
    @Body(new ZodValidationPipe(NoticeDoneBodySchema)) body: NoticeDoneBody,
    @CurrentPrincipal() approver: Principal,
    @Req() req: Request,
  ): Promise<{ callId: string; requestId: string; status: 'done'; next: string }> {
    // Unknown, or not routed to the caller: 404, the same answer.
    const { request } = await this.votes
      .completeNoticeOn(id, {
        approver: approver.id,
        approverGroups: this.directory.groupsOf(approver.id),
        note: body.note?.trim() || undefined,
        channel: channelOf(req),
      })
      .catch((error: unknown) => {
        if (error instanceof AmbiguousCallIdError) throw ambiguous(error);
        throw error;
      });
    return {
      callId: request.callId,
      requestId: request.requestId,
      status: 'done',
      next: `Marked done. The agent is told that a person did ${request.toolName}${body.note ? ', with your note' : ''}, before its next turn (if its run is still going).`,
    };
  }

  private caller(principal: Principal): Caller {
    return { id: principal.id, groups: this.directory.groupsOf(principal.id) };
  }
}

/** The request of a resolution; 409 naming the choices when a call ID names requests of several runs. */
function named(id: string, resolution: Resolution): StoredApproval | undefined {
  if (resolution.status === 'found') return resolution.approval;
  if (resolution.status === 'not_found') return undefined;
  throw ambiguous(new AmbiguousCallIdError(id, resolution.requestIds));
}

/** Which channel a REST vote came through, for the audit: the inbox page (cookie), the CLI, or the API. */
function channelOf(req: Request): 'web' | 'cli' | 'api' {
  if (!req.headers.authorization) return 'web';
  return req.headers['x-countersign-client'] === 'cli' ? 'cli' : 'api';
}

/** The next page, relative to this service's root (RFC 8288 `Link` target): same status and limit. */
function nextPageUrl(query: ApprovalListQuery, next: ApprovalCursor): string {
  const params = new URLSearchParams();
  if (query.status) params.set('status', query.status);
  params.set('limit', String(query.limit));
  params.set('cursor', encodeApprovalCursor(next));
  return `/approvals?${params}`;
}

/** The 409 of a call ID several runs used: a code of its own (not "already decided") and the request IDs to choose from. */
function ambiguous(error: AmbiguousCallIdError): ConflictException {
  return new ConflictException({
    statusCode: 409,
    error: 'ambiguous_call_id',
    message: error.message,
    requestIds: error.requestIds,
  });
}
